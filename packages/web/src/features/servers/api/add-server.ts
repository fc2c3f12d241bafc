import {
  type AddServerRequest,
  addServerRequest,
  type DashboardData,
  type DashboardServer,
  testAddressRequest,
} from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest, numberOf } from '../../../lib/schema';
import { productsKey } from '../../billing/api/get-products';
import { serversKey } from './get-servers';

export interface AddServerValues {
  product_id: string;
  name: string;
  api_url: string;
  api_key: string;
  tls_fingerprint: string;
}

export const isHttpsAddress = (apiUrl: string) => /^https:\/\//i.test(apiUrl.trim());

/** The pin goes with an https address only (the field is hidden, and ignored, for http); empty means "trust the CA chain". */
export const pinOf = (values: Pick<AddServerValues, 'api_url' | 'tls_fingerprint'>) =>
  isHttpsAddress(values.api_url) && values.tls_fingerprint.trim()
    ? { tls_fingerprint: values.tls_fingerprint.trim() }
    : {};

/** The address to try before saving (`POST /api/servers/test`). */
export const connectionBody = (values: AddServerValues) => ({
  api_url: values.api_url,
  api_key: values.api_key,
  ...pinOf(values),
});

/** The form's values as the console takes them (routes/servers). */
export const addServerBody = (values: AddServerValues): AddServerRequest => ({
  product_id: numberOf(values.product_id) as number,
  name: values.name,
  ...connectionBody(values),
});

export const checkAddServer = (values: AddServerValues) => checkRequest(addServerRequest, addServerBody(values));

export const checkConnection = (values: AddServerValues) => checkRequest(testAddressRequest, connectionBody(values));

export const addServer = (body: AddServerRequest) => request<DashboardData<'server'>>('POST', '/api/servers', { body });

export const useAddServer = (onDone: (server: DashboardServer) => void) =>
  useMutation(addServer, (out) => {
    invalidate(serversKey);
    invalidate(productsKey);
    onDone(out.server);
  });
