import { serve } from '@hono/node-server';
import { Hono } from 'hono';

/** The baseline: a bare Hono app on the same Node server adapter. */
const app = new Hono();
app.get('/hello', (c) => c.json({ data: { hello: 'world' } }));
const port = Number(process.argv[2]);
serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => process.stdout.write(`listening ${port}\n`));
