import type { RequestBodyName } from '../requests/index.js';
import type { DashboardRoute } from './route.js';

/** The catalog, the products of the account and what they cost. */
export const billingRoutes: DashboardRoute[] = [
  {
    method: 'get',
    path: '/api/catalog',
    summary: 'The plans on offer',
    auth: 'public',
    status: 200,
    answer: 'catalog',
    errors: [],
  },
  {
    method: 'get',
    path: '/api/products',
    summary: "The account's products with their server counts",
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'products',
    errors: [401],
  },
  {
    method: 'post',
    path: '/api/products',
    summary: 'Add a product from the catalog',
    auth: 'session',
    status: 201,
    answer: 'product',
    errors: [400, 401, 409],
  },
  {
    method: 'delete',
    path: '/api/products/{id}',
    summary: 'Remove a product no server uses and no enrolment token can still add servers to',
    auth: 'session',
    status: 200,
    answer: 'deleted',
    errors: [401, 404, 409],
  },
  {
    method: 'get',
    path: '/api/billing/summary',
    summary: 'What the products cost, per currency and interval',
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'billing',
    errors: [401],
  },
];

/** The body each write of this area takes, by `<method> <path>` (schemas in packages/protocol/src/requests). */
export const billingRequestBodies: Record<string, RequestBodyName> = {
  'post /api/products': 'AddProduct',
};
