import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { ConsoleConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import type { GuardedClient } from '../outbound/guarded-client.js';
import { createMailer } from '../outbound/mailer.js';
import type { SecretBox } from '../secrets.js';
import { type AccessTokensService, createAccessTokensService } from './access-tokens.service.js';
import { type AccountSecurityService, createAccountSecurityService } from './account-security.service.js';
import { type AccountsService, createAccountsService } from './accounts.service.js';
import { type AgentUpdatesService, createAgentUpdatesService } from './agent-updates.service.js';
import { type AlertsService, createAlertsService } from './alerts/index.js';
import { type AuditService, createAuditService } from './audit.service.js';
import { type BenchmarksService, createBenchmarksService } from './benchmarks.service.js';
import { type CatalogService, createCatalogService } from './catalog.service.js';
import { type CheckinsService, createCheckinsService } from './checkins.service.js';
import { type Coherence, createCoherence } from './coherence/index.js';
import { createEnrolmentService, type EnrolmentService } from './enrolment.service.js';
import { createFleetService, type FleetService } from './fleet-protection/index.js';
import { createHealthService, type HealthService } from './health.service.js';
import { createHousekeepingService, type HousekeepingService } from './housekeeping.service.js';
import { createInvitationsService, type InvitationsService } from './invitations.service.js';
import { createNotificationsService, type NotificationsService } from './notifications.service.js';
import { createSecurityEventsService, type SecurityEventsService } from './security-events.service.js';
import { type AgentsService, createAgentsService, createServersService, type ServersService } from './servers/index.js';
import { createSigningService, type SigningService } from './signing.service.js';
import { createSingleSignOnService, openIdProvider, type SingleSignOnService } from './single-sign-on.service.js';
import { createTeamsService, type TeamsService } from './teams.service.js';
import { createTicketsService, type TicketsService } from './tickets.service.js';

/** What every service may use: the database, the settings, the clock and the side-effect boundaries. */
export interface ServiceDeps {
  db: Database;
  config: ConsoleConfig;
  clock: () => number;
  outbound: GuardedClient;
  secrets: SecretBox;
}

export interface Services {
  coherence: Coherence;
  accounts: AccountsService;
  accountSecurity: AccountSecurityService;
  tokens: AccessTokensService;
  catalog: CatalogService;
  agents: AgentsService;
  servers: ServersService;
  enrolment: EnrolmentService;
  checkins: CheckinsService;
  benchmarks: BenchmarksService;
  securityEvents: SecurityEventsService;
  signing: SigningService;
  notifications: NotificationsService;
  tickets: TicketsService;
  alerts: AlertsService;
  housekeeping: HousekeepingService;
  audit: AuditService;
  fleet: FleetService;
  health: HealthService;
  agentUpdates: AgentUpdatesService;
  teams: TeamsService;
  invitations: InvitationsService;
  singleSignOn: SingleSignOnService;
}

declare module 'fastify' {
  interface FastifyInstance {
    db: Database;
    config: ConsoleConfig;
    clock: () => number;
    outbound: GuardedClient;
    secrets: SecretBox;
    services: Services;
  }
}

type ServiceName = keyof Services;

/** One service: its name, the services it is built on, and how it is built from them. */
interface ServiceDefinition<K extends ServiceName = ServiceName> {
  name: K;
  needs: readonly ServiceName[];
  build(deps: ServiceDeps, services: Services): Services[K];
}

function define<K extends ServiceName, N extends ServiceName = never>(
  name: K,
  needs: readonly N[],
  build: (deps: ServiceDeps, services: Pick<Services, N>) => Services[K],
): ServiceDefinition<K> {
  return { name, needs, build };
}

/** Every service, each after the ones it needs. The plugins and createServices build from this one list. */
const DEFINITIONS: readonly ServiceDefinition[] = [
  define('coherence', [], ({ db, config }) => createCoherence({ db, config })),
  define('securityEvents', [], ({ db, clock }) => createSecurityEventsService({ db, clock })),
  define('signing', ['securityEvents'], ({ db, clock }, s) =>
    createSigningService({ db, clock, events: s.securityEvents }),
  ),
  define('notifications', [], ({ db, clock, outbound, secrets, config }) =>
    createNotificationsService({
      db,
      clock,
      outbound,
      secrets,
      mailer: createMailer(config.smtpUrl, config.smtpFrom),
      publicUrl: config.publicUrl,
    }),
  ),
  define('tickets', ['notifications'], ({ db, clock }, s) =>
    createTicketsService({ db, clock, notifications: s.notifications }),
  ),
  define('alerts', ['notifications'], ({ db, clock, outbound, secrets, config }, s) =>
    createAlertsService({
      db,
      clock,
      outbound,
      secrets,
      notifications: s.notifications,
      checkinIntervalS: config.checkinIntervalS,
    }),
  ),
  define('accounts', ['coherence'], ({ db, clock, config }, s) =>
    createAccountsService({ db, clock, config, changes: s.coherence }),
  ),
  define('accountSecurity', ['securityEvents', 'coherence'], ({ db, clock, config, secrets }, s) =>
    createAccountSecurityService({ db, clock, config, secrets, events: s.securityEvents, changes: s.coherence }),
  ),
  define('tokens', ['coherence'], ({ db, clock }, s) =>
    createAccessTokensService({ db, clock, coherence: s.coherence }),
  ),
  define('catalog', [], ({ db, clock }) => createCatalogService({ db, clock })),
  define('agents', [], ({ db, clock, config, outbound, secrets }) =>
    createAgentsService({ db, clock, config, outbound, secrets }),
  ),
  define('housekeeping', [], ({ db, clock }) => createHousekeepingService({ db, clock })),
  define('audit', [], ({ db, clock }) => createAuditService({ db, clock })),
  define('teams', ['accounts', 'audit', 'coherence'], ({ db, clock }, s) =>
    createTeamsService({ db, clock, accounts: s.accounts, audit: s.audit, changes: s.coherence }),
  ),
  // Invitations are mailed the way alert mail is (outbound/mailer.ts), when PALISADE_SMTP_URL is set.
  define('invitations', ['accounts', 'audit'], ({ db, clock, config }, s) =>
    createInvitationsService({
      db,
      clock,
      mailer: createMailer(config.smtpUrl, config.smtpFrom),
      mailConfigured: config.smtpUrl !== null,
      accounts: s.accounts,
      audit: s.audit,
    }),
  ),
  define('singleSignOn', ['accounts', 'teams', 'audit'], ({ db, clock, config }, s) =>
    createSingleSignOnService({
      db,
      clock,
      settings: config.oidc,
      provider: config.oidc ? openIdProvider(config.oidc) : null,
      accounts: s.accounts,
      teams: s.teams,
      audit: s.audit,
    }),
  ),
  define('fleet', ['agents', 'audit'], ({ db, clock, config }, s) =>
    createFleetService({ db, clock, agents: s.agents, audit: s.audit, config }),
  ),
  define('servers', ['agents', 'coherence', 'fleet'], ({ db, clock, config, secrets }, s) =>
    createServersService({
      db,
      clock,
      config,
      secrets,
      agents: s.agents,
      changes: s.coherence,
      serverChanged: s.fleet.serverChanged, // new or retagged servers follow the fleet scopes
    }),
  ),
  define('enrolment', ['servers'], ({ db, clock }, s) => createEnrolmentService({ db, clock, servers: s.servers })),
  define('benchmarks', ['servers', 'catalog'], ({ db, clock }, s) =>
    createBenchmarksService({ db, clock, servers: s.servers, catalog: s.catalog }),
  ),
  define('agentUpdates', ['audit', 'notifications'], ({ db, clock, config }, s) =>
    createAgentUpdatesService({ db, clock, config, audit: s.audit, notifications: s.notifications }),
  ),
  define('checkins', ['benchmarks', 'coherence', 'fleet', 'agentUpdates'], ({ db, clock, config }, s) =>
    createCheckinsService({
      db,
      clock,
      config,
      changes: s.coherence,
      jobsFor: s.benchmarks.jobsFor, // pending runs reach agents in check-in answers
      checkedIn: s.fleet.checkedIn, // bans reported in check-ins propagate
      updateFor: s.agentUpdates.checkedIn, // update offers and reports (docs/fleet.md, "Agent updates")
    }),
  ),
  define('health', [], ({ db, clock, config }) => createHealthService({ db, clock, config })),
];

const BOUNDARIES = ['db', 'config', 'clock', 'outbound', 'secrets'] as const;
const SERVICES_PLUGIN = 'palisade-services';
const pluginName = (name: ServiceName) => `palisade-service-${name}`;

/** Sets one entry of a services object (the generic assignment TypeScript cannot check per key). */
function put<K extends ServiceName>(services: Services, definition: ServiceDefinition<K>, deps: ServiceDeps) {
  services[definition.name] = definition.build(deps, services);
}

/**
 * The services without an HTTP app, for the admin CLI, tests and benchmarks: the same definitions
 * the plugins build from, in the same order.
 */
export function createServices(deps: ServiceDeps): Services {
  const services = {} as Services;
  for (const definition of DEFINITIONS) put(services, definition, deps);
  return services;
}

/** `app.services`, empty until each service's plugin adds its entry. */
const servicesRoot = fp(
  async (app: FastifyInstance) => {
    app.decorate('services', {} as Services);
  },
  { name: SERVICES_PLUGIN, fastify: '5.x' },
);

/**
 * One named plugin per service, declaring the boundaries it reads and the services it is built on:
 * Fastify refuses to start if one is registered before what it depends on.
 */
export const servicePlugins = [
  servicesRoot,
  ...DEFINITIONS.map((definition) =>
    fp(
      async (app: FastifyInstance) => {
        const { db, config, clock, outbound, secrets } = app;
        put(app.services, definition, { db, config, clock, outbound, secrets });
      },
      {
        name: pluginName(definition.name),
        fastify: '5.x',
        dependencies: [SERVICES_PLUGIN, ...definition.needs.map(pluginName)],
        decorators: { fastify: [...BOUNDARIES, 'services'] },
      },
    ),
  ),
];
