import type { AlertRuleRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { alertRulesKey } from './get-rules';
import type { AlertRule } from './types';

/** Replaces a rule (the whole rule, as `checkRule` builds it). */
export const updateRule = ({ id, body }: { id: number; body: AlertRuleRequest }) =>
  request<{ rule: AlertRule }>('PUT', `/api/alerts/rules/${id}`, { body });

export const useUpdateRule = () => useMutation(updateRule, () => invalidate(alertRulesKey));
