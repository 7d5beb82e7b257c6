import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { chromium, type Browser } from "playwright-core";

/**
 * Headless Chromium for the browser tests (the setup page, the console). It is found the way
 * `.ci/run` finds it (`command -v chromium`: the first `chromium` on PATH). Without it the browser
 * tests are skipped with a message on a developer's machine, and fail under CI (`CI` set), where a
 * missing browser must never pass silently.
 */
export const CHROMIUM: string | undefined = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((dir) => dir !== "")
  .map((dir) => join(dir, "chromium"))
  .find((candidate) => existsSync(candidate));

/** Starts it headless, with nothing that reaches out of loopback; undefined when there is none. */
export async function launchChromium(): Promise<Browser | undefined> {
  if (CHROMIUM === undefined) return undefined;
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
