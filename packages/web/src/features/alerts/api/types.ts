/** The console's alert answers: their schemas are in packages/protocol/src/alerts.ts. */
export type {
  AlertChannel,
  AlertHistoryEntry,
  AlertRule,
  ChannelKind,
  ChannelTestResult,
  Metric,
  RuleKind,
} from '@palisade/protocol';
