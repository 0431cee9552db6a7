/**
 * The ceilings the benchmarks are measured against: a bare Fastify app in the same process setup as
 * the service (production mode, same logger settings, same pool size), with a bare JSON route, one
 * SELECT by primary key and one INSERT through the same kind of pool.
 */
import Fastify, { LogController } from 'fastify';
import pg from 'pg';
import { v7 } from 'uuid';

const port = Number(process.env.PORT);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const app = Fastify({
  logger: { level: 'warn' },
  logController: new LogController({ disableRequestLogging: true }),
});

await pool.query(`CREATE TABLE IF NOT EXISTS bench_ceiling (
  id uuid PRIMARY KEY, org_id uuid NOT NULL, name text, email text, created_at timestamptz NOT NULL DEFAULT now())`);
const { rows } = await pool.query('SELECT id FROM bench_ceiling LIMIT 1');
let sampleId: string = rows[0]?.id;
if (!sampleId) {
  sampleId = v7();
  await pool.query('INSERT INTO bench_ceiling (id, org_id, name) VALUES ($1, $1, $2)', [sampleId, 'sample']);
}

app.get('/bare', async () => ({ ok: true, service: 'ceiling' }));
app.get('/select', async () => {
  const result = await pool.query({
    name: 'ceiling_select',
    text: 'SELECT id, org_id, name, email, created_at FROM bench_ceiling WHERE id = $1',
    values: [sampleId],
  });
  return result.rows[0];
});
app.post('/insert', async (_request, reply) => {
  const id = v7();
  const result = await pool.query({
    name: 'ceiling_insert',
    text: 'INSERT INTO bench_ceiling (id, org_id, name, email) VALUES ($1, $2, $3, $4) RETURNING id, created_at',
    values: [id, sampleId, 'name', `${id}@example.com`],
  });
  reply.code(201);
  return result.rows[0];
});

await app.listen({ port, host: '127.0.0.1' });
process.on('SIGTERM', () =>
  app
    .close()
    .then(() => pool.end())
    .then(() => process.exit(0)),
);
