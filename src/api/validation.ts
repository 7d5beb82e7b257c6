import type { z } from "zod";
import { errorFromZod } from "../errors/from-zod.ts";

/** Parses untrusted input once at the edge; the first problem becomes a typed ServiceError. */
export function parseWith<T>(schema: z.ZodType<T>, input: unknown, prefix = ""): T {
  const result = schema.safeParse(input, { reportInput: true });
  if (!result.success) throw errorFromZod(result.error, prefix);
  return result.data;
}
