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
    response: { status: 200, description: "A list of end users" },
    handler: async ({ deps, principal, query }) => ({
      body: await listEndUsersPage(deps, principal.projectId, query),
    }),
  }),
  defineRoute({
    method: "POST",
    url: "/v1/end-users",
    operationId: "endUsers.create",
    summary: "Create an end user",
    tag: TAG,
    body: createEndUserBody,
    response: { status: 201, description: "The end user" },
    handler: async ({ deps, principal, body }) => ({
      status: 201,
      body: await createEndUser(deps, principal.projectId, body),
    }),
  }),
  defineRoute({
    method: "GET",
    url: "/v1/end-users/:id",
    operationId: "endUsers.retrieve",
    summary: "Retrieve an end user",
    tag: TAG,
    pathParams: ["id"],
    response: { status: 200, description: "The end user" },
    handler: async ({ deps, principal, params }) => ({
      body: await getEndUser(deps, principal.projectId, params.id ?? ""),
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
    response: { status: 200, description: "The end user" },
    handler: async ({ deps, principal, params, body }) => ({
      body: await changeEndUser(deps, principal.projectId, params.id ?? "", body),
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
    response: { status: 200, description: "`{id, objectType, deleted: true}`" },
    handler: async ({ deps, principal, params }) => ({
      body: await removeEndUser(deps, principal.projectId, params.id ?? ""),
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
    response: { status: 200, description: "The end user" },
    handler: async ({ deps, principal, params, body }) => ({
      body: await resetCompanyFile(deps, principal.projectId, params.id ?? "", body.mode),
    }),
  }),
];
