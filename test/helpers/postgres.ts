import pg from 'pg';
import { inject } from 'vitest';

/**
 * The tests' PostgreSQL server (a real one, or PGlite's socket server as the fallback), and a
 * way to run statements as its owner on short-lived connections: PGlite's socket server serves
 * one connection at a time.
 */
export function testPostgres() {
  const target = inject('postgres');
  const admin = {
    async query(text: string, values: unknown[] = []) {
      const client = new pg.Client({ host: target.host, port: target.port, database: target.database, user: target.username, password: target.password });
      await client.connect();
      try {
        return await client.query(text, values);
      } finally {
        await client.end();
      }
    },
  };
  return { target, admin };
}
