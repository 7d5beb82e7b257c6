import { join, relative, resolve } from "node:path";

/** File name of the admin channel's Unix socket inside the data directory. */
export const ADMIN_SOCKET_NAME = "admin.sock";

/** Longest socket path the kernel accepts (sun_path is 108 bytes on Linux, 104 on macOS). */
const SOCKET_PATH_MAX_BYTES = 100;

/**
 * The admin socket of a data directory, as the shorter of its absolute path and its path relative
 * to the working directory; null when both are too long for a Unix socket (the channel is then off,
 * and the CLI says so).
 */
export function adminSocketPath(dataDir: string): string | null {
  const absolute = join(resolve(dataDir), ADMIN_SOCKET_NAME);
  const fromHere = relative(process.cwd(), absolute);
  const shortest =
    [absolute, fromHere].sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b))[0] ?? absolute;
  return Buffer.byteLength(shortest) <= SOCKET_PATH_MAX_BYTES ? shortest : null;
}
