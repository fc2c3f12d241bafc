import { z } from 'zod';

/** `POST /api/products`: a catalog item added to the account. */
export const addProductRequest = z.object({
  catalog_id: z
    .number('expected a positive integer')
    .int('expected a positive integer')
    .positive('expected a positive integer'),
});
export type AddProductRequest = z.input<typeof addProductRequest>;
