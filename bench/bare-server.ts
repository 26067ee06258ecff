/**
 * The benchmark's floor: a bare Fastify server, started as its own process, that answers the same
 * POST /v1/transactions request (JSON body parsed by Fastify) with a constant, and no logging, no
 * auth and no database. Its throughput is what Node and Fastify alone allow on this machine.
 */
import Fastify from 'fastify';

const CONSTANT = { id: 'txn_bare', object: 'transaction', status: 'pending_payment' };

const app = Fastify({ logger: false });
app.post('/v1/transactions', async (_request, reply) => reply.code(201).send(CONSTANT));
app.get('/healthz', async () => ({ status: 'ok' }));

const port = Number(process.env.PORT ?? 0);
await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`bare server listening on ${port}\n`);

const stop = () => {
  void app.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
