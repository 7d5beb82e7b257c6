import { request } from "node:http";
import type { AdminStatus } from "./channel.ts";
import type { AdminOperations } from "./operations.ts";

/**
 * The CLI's side of the admin channel (see `channel.ts`): the same {@link AdminOperations}, carried
 * as JSON over the service's Unix socket.
 */
interface Answer {
  status: number;
  body: unknown;
}

function exchange(
  socketPath: string,
  method: string,
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath,
        method,
        path,
        headers: payload === undefined ? {} : { "content-type": "application/json" },
        timeout: timeoutMs,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : null });
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`the service did not answer on ${socketPath}`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/** The service's status when one answers on `socketPath`; null when nothing listens there. */
export async function probeAdminChannel(socketPath: string, timeoutMs = 2000): Promise<AdminStatus | null> {
  try {
    const answer = await exchange(socketPath, "GET", "/status", undefined, timeoutMs);
    return answer.status === 200 ? (answer.body as AdminStatus) : null;
  } catch {
    return null;
  }
}

/** Operations performed by the service listening on `socketPath`. */
export function remoteAdmin(socketPath: string): AdminOperations {
  // Creating keys and attaching connectors are quick; a minute covers a busy service. Re-sealing
  // reads every sealed value in batches: an hour covers a store of millions of Requests.
  const send = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const answer = await exchange(
      socketPath,
      method,
      path,
      body,
      path === "/secrets/reseal" || path.includes("/support-bundle") ? 3_600_000 : 60_000,
    );
    if (answer.status >= 400) {
      const message = (answer.body as { error?: { message?: string } } | null)?.error?.message;
      throw new Error(message ?? `the service answered ${answer.status}`);
    }
    return answer.body as T;
  };
  const p = encodeURIComponent;
  return {
    createProject: (input) => send("POST", "/projects", input),
    listProjects: () => send("GET", "/projects"),
    createKey: ({ projectId, ...rest }) => send("POST", `/projects/${p(projectId)}/keys`, rest),
    listKeys: (projectId) => send("GET", `/projects/${p(projectId)}/keys`),
    revokeKey: async (projectId, keyId) =>
      (await send<{ revoked: boolean }>("POST", `/projects/${p(projectId)}/keys/${p(keyId)}/revoke`, {}))
        .revoked,
    simulateEndUser: ({ projectId, endUserId, application }) =>
      send(
        "POST",
        `/projects/${p(projectId)}/end-users/${p(endUserId)}/simulated-connector`,
        application ?? {},
      ),
    setQuota: ({ projectId, ...rest }) => send("PUT", `/projects/${p(projectId)}/quota`, rest),
    setPayment: ({ projectId, ...rest }) => send("PUT", `/projects/${p(projectId)}/payment`, rest),
    setDisabled: ({ projectId, ...rest }) => send("PUT", `/projects/${p(projectId)}/disabled`, rest),
    usage: (projectId) => send("GET", `/projects/${p(projectId)}/usage`),
    resealSecrets: () => send("POST", "/secrets/reseal", {}),
    getMirror: ({ projectId, endUserId }) =>
      send("GET", `/projects/${p(projectId)}/end-users/${p(endUserId)}/mirror`),
    supportBundle: ({ endUserId, ...query }) => {
      const search = new URLSearchParams(
        Object.entries(query).filter((e): e is [string, string] => typeof e[1] === "string"),
      ).toString();
      return send("GET", `/end-users/${p(endUserId)}/support-bundle${search ? `?${search}` : ""}`);
    },
    setMirror: ({ projectId, endUserId, resources }) =>
      send("PUT", `/projects/${p(projectId)}/end-users/${p(endUserId)}/mirror`, { resources }),
  };
}
