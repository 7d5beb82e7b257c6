import type { RouteDefinition } from "../route.ts";
import { apiKeyRoutes } from "./api-keys.ts";
import { authSessionRoutes } from "./auth-sessions.ts";
import { endUserRoutes } from "./end-users.ts";
import { ledgerResourceRoutes } from "./ledger-resources.ts";
import { ledgerSpecialRoutes } from "./ledger-special.ts";
import { requestRoutes } from "./requests.ts";
import { webhookEndpointRoutes } from "./webhook-endpoints.ts";
import { changeFeedSubscriptionRoutes } from "./change-feed-subscriptions.ts";

/** Every authenticated API route; the OpenAPI document is built from this list. */
export const apiRoutes: RouteDefinition[] = [
  ...endUserRoutes,
  ...authSessionRoutes,
  ...requestRoutes,
  ...ledgerSpecialRoutes,
  ...ledgerResourceRoutes(),
  ...webhookEndpointRoutes,
  ...changeFeedSubscriptionRoutes,
  ...apiKeyRoutes,
];
