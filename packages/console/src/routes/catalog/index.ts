import { addProductRequest } from '@palisade/protocol';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.js';
import { requireSession, requireSessionOrSigned } from '../../plugins/auth.js';
import { parseId, parseInput } from '../../validation.js';

export default async function catalogRoutes(app: FastifyInstance) {
  app.get('/api/catalog', async () => ({ data: { items: await app.services.catalog.catalog() } }));

  app.get(
    '/api/products',
    { preHandler: requireSessionOrSigned, config: { read: 'billing.read', signed: true } },
    async (request) => ({
      data: { products: await app.services.catalog.products(request.account!.id) },
    }),
  );

  app.post(
    '/api/products',
    { preHandler: requireSession, config: { permission: 'billing.write' } },
    async (request, reply) => {
      const { catalog_id } = parseInput(addProductRequest, request.body, 'body');
      const product = await app.services.catalog.addProduct(request.account!.id, catalog_id);
      return reply.status(201).send({ data: { product } });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/products/:id',
    { preHandler: requireSession, config: { permission: 'billing.write' } },
    async (request) => {
      const id = parseId(request.params.id);
      if (id === null) throw notFound('product');
      await app.services.catalog.removeProduct(request.account!.id, id);
      return { data: { deleted: true } };
    },
  );

  app.get(
    '/api/billing/summary',
    { preHandler: requireSessionOrSigned, config: { read: 'billing.read', signed: true } },
    async (request) => ({
      data: await app.services.catalog.billingSummary(request.account!.id),
    }),
  );
}
