import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { AlertRule } from './types';

export const alertRulesKey = ['alerts', 'rules'];

export const getRules = () => request<{ rules: AlertRule[] }>('GET', '/api/alerts/rules');

export const useAlertRules = () => useQuery(alertRulesKey, getRules);
