#!/usr/bin/env node
// The container's health check (Dockerfile HEALTHCHECK): exits 0 when the service on this machine
// answers 200 on /livez (it serves HTTP) and on /readyz (its store answers), 1 otherwise, naming
// the probe that failed. An orchestrator with probes of its own calls /livez and /readyz directly.
const port = process.env.PORT ?? "8080";
for (const probe of ["/livez", "/readyz"]) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${probe}`, { signal: AbortSignal.timeout(4000) });
    if (res.status !== 200) {
      console.error(`${probe}: HTTP ${res.status} ${await res.text()}`);
      process.exit(1);
    }
  } catch (error) {
    console.error(`${probe}: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
