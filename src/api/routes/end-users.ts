import { z } from "zod";
import {
  changeEndUser,
  createEndUser,
  getEndUser,
  listEndUsersPage,
  removeEndUser,
  resetCompanyFile,
} from "../../tenancy/end-users.ts";
import { defineRoute } from "../route.ts";
import {
  createEndUserBody,
  integerParam,
  platformListQuery,
  resetCompanyFileBody,
  updateEndUserBody,
} from "../schemas.ts";
import {
  connectionHistorySchema,
  endUserDeletedSchema,
  endUserListSchema,
  endUserSchema,
  mirrorSchema,
  supportBundleSchema,
} from "../response-schemas.ts";
import { supportBundle } from "../../support/bundle.ts";
import { getMirror, putMirror } from "../../mirror/settings.ts";
import { connectionHistory } from "../../connections/history.ts";

const TAG = "End users";
const noBody = z.strictObject({});
const mirrorBody = z.strictObject({
  resources: z.array(z.string().max(64)).max(100).meta({
    description:
      "Typed groups by path name (`customers`, `invoices`); any group whose list filters by `updatedAfter`",
  }),
});

/** `GET/POST /v1/end-users`, `GET/POST/DELETE /v1/end-users/{id}`, reset-company-file (architecture §5). */
export const endUserRoutes = [
  defineRoute({
    method: "GET",
    url: "/v1/end-users",
    operationId: "endUsers.list",
    summary: "List end users, newest first",
    tag: TAG,
    query: platformListQuery,
    response: { status: 200, description: "A list of end users", schema: endUserListSchema },
    handler: async ({ deps, principal, query }) => ({
      body: await listEndUsersPage(deps, principal, query),
    }),
  }),
  defineRoute({
    method: "POST",
    url: "/v1/end-users",
    operationId: "endUsers.create",
    summary: "Create an end user",
    tag: TAG,
    body: createEndUserBody,
    examples: { create: { companyName: "Example Co", sourceId: "customer-1042", email: null } },
    response: { status: 201, description: "The end user", schema: endUserSchema },
    handler: async ({ deps, principal, body }) => ({
      status: 201,
      body: await createEndUser(deps, principal, body),
    }),
  }),
  defineRoute({
    method: "GET",
    url: "/v1/end-users/:id",
    operationId: "endUsers.retrieve",
    summary: "Retrieve an end user",
    tag: TAG,
    pathParams: ["id"],
    response: { status: 200, description: "The end user", schema: endUserSchema },
    handler: async ({ deps, principal, params }) => ({
      body: await getEndUser(deps, principal, params.id ?? ""),
    }),
  }),
  defineRoute({
    method: "POST",
    url: "/v1/end-users/:id",
    operationId: "endUsers.update",
    summary: "Update an end user",
    tag: TAG,
    pathParams: ["id"],
    body: updateEndUserBody,
    examples: { rename: { companyName: "Example Co (renamed)" } },
    response: { status: 200, description: "The end user", schema: endUserSchema },
    handler: async ({ deps, principal, params, body }) => ({
      body: await changeEndUser(deps, principal, params.id ?? "", body),
    }),
  }),
  defineRoute({
    method: "DELETE",
    url: "/v1/end-users/:id",
    operationId: "endUsers.delete",
    summary: "Delete an end user with its connection, credentials and stored requests",
    tag: TAG,
    pathParams: ["id"],
    body: noBody.optional(),
    response: { status: 200, description: "`{id, objectType, deleted: true}`", schema: endUserDeletedSchema },
    handler: async ({ deps, principal, params }) => ({
      body: await removeEndUser(deps, principal, params.id ?? ""),
    }),
  }),
  defineRoute({
    method: "POST",
    url: "/v1/end-users/:id/reset-company-file",
    operationId: "endUsers.resetCompanyFile",
    summary: "Forget the stored company file path (mode `path`) or also its identity (mode `identity`)",
    tag: TAG,
    pathParams: ["id"],
    body: resetCompanyFileBody,
    examples: { path: { mode: "path" }, identity: { mode: "identity" } },
    response: { status: 200, description: "The end user", schema: endUserSchema },
    handler: async ({ deps, principal, params, body }) => ({
      body: await resetCompanyFile(deps, principal, params.id ?? "", body.mode),
    }),
  }),
  defineRoute({
    method: "GET",
    url: "/v1/end-users/:id/connection-history",
    operationId: "endUsers.connectionHistory",
    summary: "The connection's status changes and availability over the last `days` days (default 7)",
    tag: TAG,
    pathParams: ["id"],
    query: z.strictObject({
      days: integerParam("days", 1, 30, 7),
      limit: integerParam("limit", 1, 200, 50),
    }),
    response: { status: 200, description: "The connection's history", schema: connectionHistorySchema },
    handler: async ({ deps, principal, params, query }) => ({
      body: await connectionHistory(deps, principal, params.id ?? "", query),
    }),
  }),
  defineRoute({
    method: "GET",
    url: "/v1/end-users/:id/support-bundle",
    operationId: "endUsers.supportBundle",
    summary:
      "A support bundle: the end user's connection, Requests with messages and answers (secrets masked), connector sessions and webhook deliveries in a window",
    tag: TAG,
    pathParams: ["id"],
    query: z.strictObject({
      since: z.string().max(40).optional().meta({
        description:
          "Window start: an ISO 8601 timestamp or a duration before now (`2h`, `7d`); default a day before `until`",
      }),
      until: z.string().max(40).optional().meta({
        description: "Window end: an ISO 8601 timestamp or a duration before now; default now",
      }),
    }),
    response: { status: 200, description: "The support bundle", schema: supportBundleSchema },
    handler: async ({ deps, principal, params, query }) => ({
      body: await supportBundle(deps, principal, params.id ?? "", query),
    }),
  }),
  defineRoute({
    method: "GET",
    url: "/v1/end-users/:id/mirror",
    operationId: "endUsers.mirror.retrieve",
    summary: "The end user's mirrored groups and the state of each copy",
    tag: TAG,
    pathParams: ["id"],
    response: { status: 200, description: "The mirror", schema: mirrorSchema },
    handler: async ({ deps, principal, params }) => ({
      body: await getMirror(deps, principal, params.id ?? ""),
    }),
  }),
  defineRoute({
    method: "PUT",
    url: "/v1/end-users/:id/mirror",
    operationId: "endUsers.mirror.update",
    summary:
      "Choose the groups mirrored for reads while the PC is off (`[]` turns the mirror off and deletes the copy)",
    tag: TAG,
    pathParams: ["id"],
    body: mirrorBody,
    examples: { customersAndInvoices: { resources: ["customers", "invoices"] }, off: { resources: [] } },
    response: { status: 200, description: "The mirror", schema: mirrorSchema },
    handler: async ({ deps, principal, params, body }) => ({
      body: await putMirror(deps, principal, params.id ?? "", body),
    }),
  }),
];
