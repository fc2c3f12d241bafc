import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { alertRulesKey } from './get-rules';

export const deleteRule = (id: number) => request<unknown>('DELETE', `/api/alerts/rules/${id}`);

export const useDeleteRule = () => useMutation(deleteRule, () => invalidate(alertRulesKey));
