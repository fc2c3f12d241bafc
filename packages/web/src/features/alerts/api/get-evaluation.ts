import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { AlertEvaluation } from './types';

export const alertEvaluationKey = ['alerts', 'evaluation'];

export const getEvaluation = () => request<AlertEvaluation>('GET', '/api/alerts/evaluation');

/** Read again every 15 s, so "last checked" stays near the truth while the page is open. */
export const useAlertEvaluation = () => useQuery(alertEvaluationKey, getEvaluation, { intervalMs: 15_000 });
