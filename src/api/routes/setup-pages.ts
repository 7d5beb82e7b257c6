import type { FastifyInstance } from "fastify";
import type { Deps } from "../../deps.ts";

/** The hosted setup flow behind `authFlowUrl` (placeholder until the page lands). */
export function registerSetupPages(_app: FastifyInstance, _deps: Deps): void {}
