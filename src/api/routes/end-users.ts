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
import { createEndUserBody, platformListQuery, resetCompanyFileBody, updateEndUserBody } from "../schemas.ts";
import { endUserDeletedSchema, endUserListSchema, endUserSchema } from "../response-schemas.ts";

const TAG = "End users";
const noBody = z.strictObject({});

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
];
