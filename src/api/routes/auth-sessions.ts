import { createAuthSession } from "../../tenancy/auth-sessions.ts";
import { defineRoute } from "../route.ts";
import { createAuthSessionBody } from "../schemas.ts";
import { authSessionSchema } from "../response-schemas.ts";

/** `POST /v1/auth-sessions` (spec). */
export const authSessionRoutes = [
  defineRoute({
    method: "POST",
    url: "/v1/auth-sessions",
    operationId: "authSessions.create",
    summary: "Create an auth session: a time-limited link to the hosted setup flow",
    tag: "Auth sessions",
    body: createAuthSessionBody,
    examples: {
      create: {
        publishableKey: "pk_live_000000000000000000000000",
        endUserId: "eu_00000000000000000000000000",
        linkExpiryMins: 60,
      },
    },
    headers: [
      { name: "Idempotency-Key", required: false, description: "1 to 255 printable ASCII characters" },
    ],
    response: { status: 201, description: "The auth session", schema: authSessionSchema },
    // The publishable key and the end user are checked (a foreign or missing one), and test company files are capped.
    errors: [404],
    handler: async ({ deps, principal, body }) => ({
      status: 201,
      body: await createAuthSession(deps, principal, body),
    }),
  }),
];
