import { z } from "zod";
import { ERROR_TYPES, FIX_ACTORS, OUTCOMES, catalogue } from "../errors/catalogue.ts";
import type { ErrorBody } from "../errors/service-error.ts";
import { SUPPORTED_XML_VERSIONS } from "../ledger/xml/message-set.ts";
import { REQUEST_STATUSES } from "../requests/lifecycle.ts";
import { PROBABLE_CAUSE_CODES, WAITING_REASONS } from "../requests/probable-causes.ts";
import type { RequestMessagesResource } from "../requests/messages.ts";
import type { serializeRequest } from "../requests/resource.ts";
import type { SubscriptionResource } from "../change-feed/subscriptions.ts";
import type { ApiKeyResource } from "../tenancy/api-keys.ts";
import type { AuthSessionResource } from "../tenancy/auth-sessions.ts";
import {
  CHECK_IN_BASES,
  CHECK_IN_CONFIDENCES,
  type CheckInEstimate,
} from "../connections/check-in-estimate.ts";
import { AVAILABILITY_STATES, type ConnectionHistoryResource } from "../connections/history.ts";
import { CONNECTION_STATUSES } from "../connections/status.ts";
import type { ConnectionResource } from "../connections/resource.ts";
import type { EndUserResource } from "../tenancy/end-users.ts";
import type { PlatformPage } from "../tenancy/pagination.ts";
import { DELIVERY_STATUSES, type DeliveryResource } from "../webhooks/deliveries.ts";
import type { EndpointResource } from "../webhooks/endpoints.ts";
import type { BundleConnection, BundleSession, SupportBundle } from "../support/bundle.ts";
import { EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from "../webhooks/event-types.ts";

/**
 * The response bodies of the platform routes, as Zod schemas that the OpenAPI document converts
 * (src/api/openapi.ts): each schema with an `id` becomes one shared component. The compile-time
 * checks at the end tie every schema's fields to its serializer's type, and the e2e contract test
 * (test/e2e/openapi-contract.test.ts) validates real responses against the document.
 *
 * Enumerations marked open in the spec may gain values in later versions; the document lists this
 * version's values (decision 0020).
 */
const ID_CHARS = "[0-9a-hjkmnp-tv-z]{26}";
const platformId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_${ID_CHARS}$`));
/** UTC ISO 8601 with milliseconds (spec: platform object timestamps). */
const timestamp = () => z.string().meta({ format: "date-time" });
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();
const ERROR_CODES = Object.keys(catalogue) as [keyof typeof catalogue, ...(keyof typeof catalogue)[]];

/** The error object (spec: Errors), inside `{error}` and on a Request's `error`. */
export const errorObjectSchema = z
  .object({
    type: z.enum(ERROR_TYPES),
    code: z.enum(ERROR_CODES).meta({ description: "Stable code; new codes may be added." }),
    message: z.string(),
    userFacingMessage: z.string(),
    httpStatusCode: z.number().int().nullable(),
    integrationCode: z.string().nullable(),
    requestId: z.string(),
    cause: z.enum([
      "request_validation",
      "authentication",
      "billing",
      "rate_limit",
      "connector",
      "ledger",
      "service",
    ]),
    fixes: z.array(z.object({ actor: z.enum(FIX_ACTORS), action: z.string() })),
    docsUrl: z.string().meta({ format: "uri" }),
    retryable: z.boolean(),
    outcome: z.enum(OUTCOMES),
    param: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).meta({ description: "Code specific" }),
  })
  .meta({ id: "ErrorObject", description: "One error (spec: Errors)" });

export const errorSchema = z
  .object({ error: errorObjectSchema })
  .meta({ id: "Error", description: "Every error response: `{error: {...}}`" });

const checkInEstimateSchema = z
  .object({
    expectedAt: nullable(timestamp()),
    confidence: z.enum(CHECK_IN_CONFIDENCES),
    basis: z.enum(CHECK_IN_BASES),
    intervalSeconds: z.number().int().min(0).nullable(),
    toleranceSeconds: z.number().int().min(0).nullable(),
    gapsObserved: z.number().int().min(0),
    overdueSeconds: z.number().int().min(0).nullable(),
  })
  .meta({
    id: "CheckInEstimate",
    description:
      "When the connector is expected to check in next, from its recorded check-ins (decision 0025): the basis, how far to trust it, the interval and tolerance used",
  });

const connectionSchema = z
  .object({
    id: platformId("conn"),
    objectType: z.literal("integration_connection"),
    integrationSlug: z.literal("ledger_desktop"),
    status: z.enum(CONNECTION_STATUSES),
    statusReason: z.string().nullable().meta({ description: "The error code that explains the status" }),
    isTest: z.boolean(),
    lastRequestAt: nullable(timestamp()),
    lastSuccessfulRequestAt: nullable(timestamp()),
    lastCheckInAt: nullable(timestamp()),
    expectedCheckInAt: nullable(timestamp()).meta({
      description: "The next check-in the connector's observed schedule points to (null: no basis)",
    }),
    checkInEstimate: checkInEstimateSchema,
    companyFile: z
      .object({
        companyName: z.string().nullable(),
        product: z.string().nullable(),
        xmlVersion: z.string().nullable(),
        country: z.string().nullable(),
      })
      .nullable(),
    createdAt: timestamp(),
  })
  .meta({ id: "IntegrationConnection", description: "An end user's connection to its company file" });

export const endUserSchema = z
  .object({
    id: platformId("eu"),
    objectType: z.literal("end_user"),
    createdAt: timestamp(),
    companyName: z.string(),
    sourceId: z.string(),
    email: z.string().nullable(),
    integrationConnections: z.array(connectionSchema).max(1),
  })
  .meta({ id: "EndUser", description: "One of the developer's customers, mapped to one company file" });

const statusSchema = z.enum(CONNECTION_STATUSES);
const availabilityStateSchema = z.enum(AVAILABILITY_STATES);

export const connectionHistorySchema = z
  .object({
    objectType: z.literal("connection_history"),
    endUserId: platformId("eu"),
    connectionId: nullable(platformId("conn")).meta({
      description: "Null: the end user has no connection yet",
    }),
    from: timestamp().meta({
      description: "The window's start: `days` ago, or when the connection was made",
    }),
    to: timestamp(),
    status: nullable(statusSchema).meta({
      description: "The connection's status now, as the end user shows it",
    }),
    changes: z
      .array(
        z.object({
          previousStatus: statusSchema,
          status: statusSchema,
          statusReason: z.string().nullable(),
          changedAt: timestamp(),
        }),
      )
      .meta({ description: "The status changes inside the window, newest first (at most `limit`)" }),
    hasMoreChanges: z.boolean(),
    availability: z.object({
      segments: z
        .array(z.object({ state: availabilityStateSchema, from: timestamp(), to: timestamp() }))
        .meta({ description: "The window cut into spans of one state, oldest first" }),
      seconds: z
        .object(
          Object.fromEntries(AVAILABILITY_STATES.map((s) => [s, z.number().int().min(0)])) as Record<
            (typeof AVAILABILITY_STATES)[number],
            z.ZodNumber
          >,
        )
        .meta({ description: "Seconds spent in each state inside the window" }),
    }),
  })
  .meta({
    id: "ConnectionHistory",
    description:
      "An end user's connection over the last days: its status changes and an availability strip (decision 0028)",
  });

const messageViewSchema = z.object({
  xml: z
    .string()
    .nullable()
    .meta({ description: "The document, indented, secrets redacted; null when not kept" }),
  bytes: z.number().int().nullable().meta({ description: "Its size as it was sent or received" }),
  redactedValues: z.number().int().min(0).meta({ description: "How many values were masked" }),
  note: z.string().nullable().meta({ description: "Why `xml` is null, when it is" }),
});

export const requestMessagesSchema = z
  .object({
    objectType: z.literal("request_messages"),
    requestId: platformId("req"),
    input: z
      .object({
        json: z.record(z.string(), z.unknown()).nullable().meta({
          description: "`query` and `body` as validated (a batch: its members); null for passthrough",
        }),
        redactedValues: z.number().int().min(0),
      })
      .meta({ description: "The typed call's JSON input, secrets masked" }),
    message: messageViewSchema.meta({ description: "The message set as handed to the connector" }),
    answer: messageViewSchema
      .extend({ receivedAt: nullable(timestamp()) })
      .meta({ description: "The application's answer as it arrived" }),
  })
  .meta({
    id: "RequestMessages",
    description:
      "A Request's XML message and the application's answer, with secrets redacted (decision 0028)",
  });

/** A platform list (spec: list envelope; platform cursors do not expire). */
function platformList<T extends z.ZodType>(id: string, url: string, item: T) {
  return z
    .object({
      objectType: z.literal("list"),
      url: z.string().meta({ examples: [url] }),
      data: z.array(item),
      nextCursor: z.string().nullable(),
      hasMore: z.boolean(),
      remainingCount: z.null(),
      cursorExpiresAt: z.null(),
    })
    .meta({ id, description: `A page of ${url}, newest first` });
}

function deleted<T extends string>(id: string, objectType: T, prefix: string) {
  return z
    .object({ id: platformId(prefix), objectType: z.literal(objectType), deleted: z.literal(true) })
    .meta({ id, description: "The deleted object" });
}

export const endUserListSchema = platformList("EndUserList", "/v1/end-users", endUserSchema);
export const endUserDeletedSchema = deleted("EndUserDeleted", "end_user", "eu");

export const authSessionSchema = z
  .object({
    id: platformId("authsess"),
    objectType: z.literal("auth_session"),
    createdAt: timestamp(),
    endUserId: platformId("eu"),
    clientSecret: z
      .string()
      .meta({ description: "Credential: part of `authFlowUrl`, for the end user only" }),
    authFlowUrl: z.string().meta({ format: "uri" }),
    expiresAt: timestamp(),
    redirectUrl: z.string().nullable(),
  })
  .meta({ id: "AuthSession", description: "A time-limited link to the hosted setup flow" });

const warningSchema = z
  .object({
    code: z.enum([
      "LEDGER_WARNING",
      "LEDGER_VALUE_UNREADABLE",
      "LEDGER_MARKUP_REPAIRED",
      "LEDGER_PERSONAL_DATA_WITHHELD",
    ]),
    statusCode: z.number().int().nullable(),
    message: z.string(),
    path: z
      .string()
      .nullable()
      .meta({ description: "Points into `result`, for example `data[2].lines[0].amount`" }),
  })
  .meta({ id: "RequestWarning", description: "A warning: the affected value is null, no record is dropped" });
export { warningSchema as requestWarningSchema };

const timelineEntrySchema = z
  .object({
    at: timestamp(),
    status: z.string(),
    detail: z.string().nullable(),
    elapsedMs: z.number().int().min(0),
  })
  .meta({ id: "RequestTimelineEntry" });

const diagnosisSchema = z
  .object({
    at: timestamp(),
    summary: z.string(),
    connector: z.object({
      lastSeenAt: nullable(timestamp()),
      lastCheckInAt: nullable(timestamp()),
      checkInIntervalSeconds: z.number().int(),
      silentForSeconds: z.number().int().nullable(),
      sessionOpen: z.boolean(),
      sessionOpenedAt: nullable(timestamp()),
      ledgerAnswered: z.boolean().nullable(),
      silentSessions: z.number().int().min(0),
      lastConnectionErrorCode: z.string().nullable(),
      expectedCheckInAt: nullable(timestamp()),
      checkInEstimate: checkInEstimateSchema,
    }),
    probableCauses: z.array(
      z.object({
        code: z.enum(PROBABLE_CAUSE_CODES),
        retryAt: timestamp()
          .optional()
          .meta({ description: "On `file_mode_conflict`: when it is tried again" }),
      }),
    ),
  })
  .meta({
    id: "RequestDiagnosis",
    description:
      "Why a request waits or runs long (set while it does, or frozen when it timed out or expired)",
  });

const requestFields = {
  id: platformId("req"),
  objectType: z.literal("request"),
  createdAt: timestamp(),
  projectId: platformId("proj"),
  endUserId: platformId("eu"),
  connectionId: platformId("conn").nullable(),
  operationId: z.string().meta({ examples: ["ledger.customers.create", "endUsers.passthrough"] }),
  method: z.string(),
  path: z.string(),
  mode: z.enum(["sync", "async"]),
  status: z.enum(REQUEST_STATUSES),
  outcome: z.enum(OUTCOMES),
  sentAt: nullable(timestamp()),
  completedAt: nullable(timestamp()),
  durationMs: z.number().int().nullable(),
  idempotencyKeyPresent: z.boolean(),
  previousRequestId: platformId("req").nullable(),
  waitingReason: z.enum(WAITING_REASONS).nullable(),
  queuePosition: z.number().int().min(1).nullable(),
  queueTtlExpiresAt: nullable(timestamp()),
  // Decision 0047: the same figures as the `Server-Timing` header of the call that answered it.
  timings: z.object({
    queuedMs: z.number().int().nullable().meta({
      description:
        "Milliseconds from admission to the hand-over to the connector (to the end, for a Request never handed over): `connectorMs` plus the header's `queue`",
    }),
    connectorMs: z.number().int().nullable().meta({
      description:
        "The part of `queuedMs` before the Web Connector opened the session that took the Request (0 when it was open already): the header's `connector`. Null until handed over",
    }),
    ledgerMs: z.number().int().nullable().meta({
      description: "Milliseconds from the hand-over to the application's answer: the header's `ledger`",
    }),
    totalMs: z.number().int().nullable().meta({
      description: "Milliseconds from admission to the end (the same as `durationMs`)",
    }),
  }),
  ledger: z.object({
    xmlVersion: z.enum(SUPPORTED_XML_VERSIONS).nullable(),
    messageSetId: z.string().nullable(),
    statusCode: z.number().int().nullable(),
    statusSeverity: z.enum(["Info", "Warn", "Error"]).nullable(),
  }),
  warnings: z.array(warningSchema),
  recovered: z.boolean(),
  timeline: z.array(timelineEntrySchema),
  diagnosis: diagnosisSchema.nullable(),
  error: errorObjectSchema.nullable().meta({ description: "The error once the request failed" }),
};

export const requestSummarySchema = z
  .object(requestFields)
  .meta({ id: "RequestSummary", description: "A request as lists show it (without `result`)" });

export const requestSchema = z
  .object({
    ...requestFields,
    result: z.unknown().meta({ description: "The operation's success body once it succeeded (else null)" }),
  })
  .meta({ id: "Request", description: "Every call to the application is a request (spec: Request)" });

export const requestListSchema = platformList("RequestList", "/v1/requests", requestSummarySchema);

const endpointFields = {
  id: platformId("whe"),
  objectType: z.literal("webhook_endpoint"),
  createdAt: timestamp(),
  projectId: platformId("proj"),
  url: z.string(),
  description: z.string().nullable(),
  eventTypes: z.array(z.enum(SUBSCRIBABLE_EVENT_TYPES)),
  enabled: z.boolean(),
  disabledReason: z.string().nullable(),
  includeSyncRequests: z.boolean(),
  secretRotatedAt: nullable(timestamp()),
  previousSecretExpiresAt: nullable(timestamp()),
};
export const webhookEndpointSchema = z.object(endpointFields).meta({ id: "WebhookEndpoint" });
export const webhookEndpointWithSecretSchema = z
  .object({
    ...endpointFields,
    secret: z
      .string()
      .regex(/^whsec_/)
      .meta({ description: "The signing secret, shown only here" }),
  })
  .meta({ id: "WebhookEndpointWithSecret" });
export const webhookEndpointListSchema = platformList(
  "WebhookEndpointList",
  "/v1/webhook-endpoints",
  webhookEndpointSchema,
);
export const webhookEndpointDeletedSchema = deleted("WebhookEndpointDeleted", "webhook_endpoint", "whe");

export const webhookDeliverySchema = z
  .object({
    id: platformId("whd"),
    objectType: z.literal("webhook_delivery"),
    createdAt: timestamp(),
    endpointId: platformId("whe"),
    eventId: platformId("evt").meta({ description: "Also the `webhook-id` header: deduplicate on it" }),
    eventType: z.enum(EVENT_TYPES),
    status: z.enum(DELIVERY_STATUSES),
    attemptCount: z.number().int().min(0).max(8),
    nextAttemptAt: nullable(timestamp()),
    completedAt: nullable(timestamp()),
    attempts: z.array(
      z.object({
        attempt: z.number().int().min(1),
        at: timestamp(),
        statusCode: z.number().int().nullable(),
        latencyMs: z.number().int().min(0),
        responseExcerpt: z.string().max(512).nullable(),
        error: z.string().nullable().meta({
          description:
            "`non_2xx_status`, `timeout`, `redirect_not_followed`, `network_error: ...`, `blocked_destination: ...`",
        }),
      }),
    ),
  })
  .meta({ id: "WebhookDelivery", description: "One event for one endpoint" });
export const webhookDeliveryListSchema = platformList(
  "WebhookDeliveryList",
  "/v1/webhook-endpoints/{id}/deliveries",
  webhookDeliverySchema,
);

export const changeFeedSubscriptionSchema = z
  .object({
    id: platformId("cfs"),
    objectType: z.literal("change_feed_subscription"),
    createdAt: timestamp(),
    updatedAt: timestamp(),
    projectId: platformId("proj"),
    resources: z.array(z.string()).meta({ description: "Watched resources, alphabetical" }),
    intervalMinutes: z.number().int(),
    enabled: z.boolean(),
  })
  .meta({ id: "ChangeFeedSubscription" });
export const changeFeedSubscriptionListSchema = platformList(
  "ChangeFeedSubscriptionList",
  "/v1/change-feed-subscriptions",
  changeFeedSubscriptionSchema,
);
export const changeFeedSubscriptionDeletedSchema = deleted(
  "ChangeFeedSubscriptionDeleted",
  "change_feed_subscription",
  "cfs",
);

export const passthroughJsonResultSchema = z
  .object({ xml: z.string().meta({ description: "The application's response document" }) })
  .meta({ id: "PassthroughResult" });

const apiKeyFields = {
  id: platformId("key"),
  objectType: z.literal("api_key"),
  createdAt: timestamp(),
  projectId: platformId("proj"),
  kind: z.enum(["secret", "publishable"]),
  mode: z.enum(["live", "test"]),
  readOnly: z.boolean(),
  hint: z.string().meta({ description: "The key's last four characters" }),
  revokedAt: nullable(timestamp()),
  current: z.boolean().meta({ description: "Whether this is the key the call was made with" }),
};
export const apiKeySchema = z
  .object(apiKeyFields)
  .meta({ id: "ApiKey", description: "A key of the project (never its secret; decision 0026)" });
export const apiKeyWithSecretSchema = z
  .object({
    ...apiKeyFields,
    secret: z
      .string()
      .regex(/^(sk|pk)_(live|test)_[A-Za-z0-9]+$/)
      .meta({ description: "The key itself, shown only here" }),
  })
  .meta({ id: "ApiKeyWithSecret" });
export const apiKeyListSchema = platformList("ApiKeyList", "/v1/api-keys", apiKeySchema);

const bundleSessionSchema = z.object({
  id: z
    .string()
    .regex(/^ses_[0-9a-f]{20}$/)
    .meta({ description: "The session's label inside this bundle" }),
  openedAt: timestamp(),
  closedAt: nullable(timestamp()),
  phase: z.enum(["opened", "ready", "recovering", "closing", "closed"]),
  lastActivityAt: timestamp(),
  lastWorkAt: timestamp(),
  ledgerAnsweredAt: nullable(timestamp()).meta({
    description: "When the application last answered in the session (null: it never did)",
  }),
  lastError: z.string().nullable().meta({ description: "What `getLastError` answers for the session" }),
  connectionErrors: z.number().int().min(0),
  companyFilePath: z.string().nullable(),
  xmlVersion: z.string().nullable(),
  recoveryMessageSetId: z.string().nullable().meta({
    description: "The message set whose outcome the session's first message asked about",
  }),
  requestIds: z.array(platformId("req")).meta({ description: "Requests handed over in it, in order" }),
});

const bundleConnectionSchema = z.object({
  id: platformId("conn"),
  status: statusSchema,
  statusReason: z.string().nullable(),
  companyFile: z.object({
    path: z.string().nullable(),
    companyName: z.string().nullable(),
    identity: z.string().nullable().meta({ description: "The file identity the service recorded" }),
    product: z.string().nullable(),
    xmlVersion: z.string().nullable(),
    country: z.string().nullable(),
  }),
  checkIn: z
    .object({
      lastCheckInAt: nullable(timestamp()),
      lastSeenAt: nullable(timestamp()),
      checkInGapMs: z.number().int().nullable(),
      recentCheckIns: z.array(timestamp()),
      lastConnectionErrorCode: z.string().nullable(),
      retryAt: nullable(timestamp()),
      sharedConnectorAt: nullable(timestamp()),
      loginRefusedAt: nullable(timestamp()),
      sessionInterruptedAt: nullable(timestamp()),
    })
    .meta({ description: "The check-in evidence the diagnosis reads" }),
  statusChanges: z
    .array(
      z.object({
        previousStatus: statusSchema,
        status: statusSchema,
        statusReason: z.string().nullable(),
        changedAt: timestamp(),
      }),
    )
    .meta({ description: "Status changes inside the window, oldest first" }),
});

/** `GET /v1/end-users/{id}/support-bundle` (issue 28, support/bundle.ts, decision 0049). */
export const supportBundleSchema = z
  .object({
    objectType: z.literal("support_bundle"),
    bundleVersion: z.literal(1).meta({ description: "The document's format version" }),
    generatedAt: timestamp(),
    projectId: platformId("proj"),
    mode: z.enum(["live", "test"]),
    window: z.object({ since: timestamp(), until: timestamp() }),
    endUser: endUserSchema,
    connection: bundleConnectionSchema.nullable().meta({ description: "Null: no connection yet" }),
    requests: z
      .array(
        z.object({
          request: requestSchema,
          messages: requestMessagesSchema,
          sessionId: z.string().nullable().meta({ description: "`sessions[].id` it was handed over in" }),
          background: z.boolean().meta({
            description:
              "Made by the service itself (the change feed's polls, the mirror's pages): a replay does not make it again",
          }),
          waitingReasons: z.array(z.string()).meta({
            description:
              "Waiting reasons the connection's status history gave it while it waited (connector_offline, ledger_unavailable, …), in order",
          }),
        }),
      )
      .meta({ description: "Every Request of the window, oldest first" }),
    sessions: z
      .array(bundleSessionSchema)
      .meta({ description: "Connector sessions of the window, oldest first" }),
    webhookDeliveries: z
      .array(
        webhookDeliverySchema.extend({
          requestId: nullable(platformId("req")).meta({
            description: "The Request the event is about (null: a connection event)",
          }),
        }),
      )
      .meta({ description: "Deliveries of the end user's events created in the window, oldest first" }),
    truncated: z
      .object({
        requestsLeftOut: z.number().int().min(0),
        deliveriesLeftOut: z.number().int().min(0),
        note: z.string(),
      })
      .nullable()
      .meta({ description: "Set when SUPPORT_BUNDLE_MAX_BYTES left the oldest Requests out" }),
    notes: z.array(z.string()),
  })
  .meta({
    id: "SupportBundle",
    description:
      "What happened between the service and one end user's company file in a window, secrets masked (decision 0049)",
  });

/*
 * Compile-time ties: each schema names exactly the fields its serializer returns (values are
 * checked by the e2e contract test against real responses).
 */
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
type Out<S extends z.ZodType> = z.infer<S>;
const tied = <T extends true>(value: T): T => value;
export const SCHEMA_TIES = [
  tied<SameKeys<Out<typeof errorObjectSchema>, ErrorBody>>(true),
  tied<SameKeys<Out<typeof connectionSchema>, ConnectionResource>>(true),
  tied<SameKeys<Out<typeof checkInEstimateSchema>, CheckInEstimate>>(true),
  tied<SameKeys<Out<typeof endUserSchema>, EndUserResource>>(true),
  tied<SameKeys<Out<typeof endUserListSchema>, PlatformPage<EndUserResource>>>(true),
  tied<SameKeys<Out<typeof authSessionSchema>, AuthSessionResource>>(true),
  tied<SameKeys<Out<typeof requestSchema>, Awaited<ReturnType<typeof serializeRequest>>>>(true),
  tied<SameKeys<Out<typeof webhookEndpointSchema>, EndpointResource>>(true),
  tied<SameKeys<Out<typeof webhookDeliverySchema>, DeliveryResource>>(true),
  tied<SameKeys<Out<typeof webhookDeliverySchema>["attempts"][number], DeliveryResource["attempts"][number]>>(
    true,
  ),
  tied<SameKeys<Out<typeof changeFeedSubscriptionSchema>, SubscriptionResource>>(true),
  tied<SameKeys<Out<typeof apiKeySchema>, ApiKeyResource>>(true),
  tied<SameKeys<Out<typeof connectionHistorySchema>, ConnectionHistoryResource>>(true),
  tied<SameKeys<Out<typeof requestMessagesSchema>, RequestMessagesResource>>(true),
  tied<SameKeys<Out<typeof supportBundleSchema>, SupportBundle>>(true),
  tied<SameKeys<Out<typeof bundleSessionSchema>, BundleSession>>(true),
  tied<SameKeys<Out<typeof bundleConnectionSchema>, BundleConnection>>(true),
  tied<SameKeys<Out<typeof bundleConnectionSchema>["checkIn"], BundleConnection["checkIn"]>>(true),
] as const;

/** `GET/PUT /v1/end-users/{id}/mirror` (issue 26, mirror/settings.ts). */
export const mirrorSchema = z
  .object({
    objectType: z.literal("mirror"),
    endUserId: platformId("eu"),
    resources: z.array(
      z.object({
        resource: z.string().meta({ description: "The typed group's path name (`customers`)" }),
        state: z.enum(["filling", "ready", "paused", "error"]).meta({
          description:
            "`filling`: the copy is being read (not served); `ready`: served to reads that allow its age; `paused`: the connection cannot be reached (no setup yet, disabled, another company file); `error`: the group cannot be mirrored on this company file",
        }),
        records: z.number().int().min(0),
        asOf: nullable(timestamp()).meta({
          description: "Every change the application made before this time is in the copy",
        }),
        lastChangeAppliedAt: nullable(timestamp()),
        error: nullable(z.object({ code: z.string(), message: z.string() })),
      }),
    ),
  })
  .meta({ id: "Mirror", description: "The mirrored groups of an end user's company file" });
