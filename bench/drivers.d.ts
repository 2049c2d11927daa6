/** The bare drivers the benchmarks write their raw floor with, untyped (no @types packages are installed). */
declare module "better-sqlite3"
declare module "pg"
