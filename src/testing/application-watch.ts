import type { BeginSessionOptions, BeginSessionResult } from "../simulator/application.ts";
import type { System } from "./system.ts";

/**
 * Watches the simulated application of a test system: `observe` is called with every request
 * document it is handed (a connector round trip carries one), before it processes it, with a
 * function that says when processing ended. Tests count message sets with it; benchmarks time the
 * application's own work.
 */
export function watchApplication(
  sys: Pick<System, "ledger">,
  observe: (xml: string) => ((done: void) => void) | void,
): void {
  const begin = sys.ledger.beginSession.bind(sys.ledger);
  sys.ledger.beginSession = async (options: BeginSessionOptions): Promise<BeginSessionResult> => {
    const begun = await begin(options);
    if (begun.ok) {
      const process = begun.session.processRequest.bind(begun.session);
      begun.session.processRequest = async (xml: string) => {
        const ended = observe(xml);
        try {
          return await process(xml);
        } finally {
          ended?.();
        }
      };
    }
    return begun;
  };
}
