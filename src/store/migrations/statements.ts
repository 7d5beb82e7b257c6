/** Splits a migration's DDL into statements (PGlite's extended protocol takes one at a time). */
export function statements(ddl: string): string[] {
  return ddl
    .split(/;\s*\n/)
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);
}
