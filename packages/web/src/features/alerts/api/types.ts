/** The console's alert answers: their schemas are in packages/protocol/src/alerts.ts. */
export type {
  AlertChannel,
  AlertEvaluation,
  AlertHistoryEntry,
  AlertRule,
  ChannelKind,
  ChannelTestResult,
  Metric,
  RuleKind,
} from '@palisade/protocol';
