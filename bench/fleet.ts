/**
 * The bench's side of the connector fleet (bench/connector-fleet.ts): a child process spoken to
 * over IPC, one command at a time.
 */
import { fork, type ChildProcess } from "node:child_process";
import type { FleetCommand, FleetReply } from "./connector-fleet.ts";
import { tracked } from "./children.ts";

export class Fleet {
  private readonly child: ChildProcess;
  private pending: ((reply: FleetReply) => void) | null = null;
  private readonly exited: Promise<void>;

  constructor() {
    this.child = tracked(
      fork(new URL("./connector-fleet.ts", import.meta.url), [], {
        execArgv: ["--import", "tsx"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      }),
    );
    this.child.on("message", (reply: FleetReply) => this.pending?.(reply));
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    this.child.once("exit", (code) => {
      if (this.pending) {
        console.error(`connector fleet exited (${code})`);
        process.exit(1);
      }
    });
  }

  send<K extends FleetReply["cmd"]>(command: FleetCommand): Promise<Extract<FleetReply, { cmd: K }>> {
    return new Promise((resolve) => {
      this.pending = (reply) => {
        this.pending = null;
        resolve(reply as Extract<FleetReply, { cmd: K }>);
      };
      this.child.send(command);
    });
  }

  /** Polls until `count` connectors hold a `sendRequestXML` (or `timeoutMs` passed); the last count. */
  async untilHeld(count: number, timeoutMs: number): Promise<Extract<FleetReply, { cmd: "held" }>> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const held = await this.send<"held">({ cmd: "held" });
      if (held.held >= count || Date.now() > until) return held;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async close(): Promise<void> {
    await this.send<"stopped">({ cmd: "stop" });
    this.child.kill("SIGTERM");
    await this.exited;
  }
}
