/**
 * Every request body and query the console checks, in one place: the console's routes parse with
 * them, the dashboard's forms check with them, the SDK types its arguments with them and the OpenAPI
 * document describes the bodies from them (docs/architecture.md, "Request shapes").
 */
export * from './account.js';
export * from './agent-updates.js';
export * from './alerts.js';
export * from './billing.js';
export * from './credentials.js';
export * from './enrolment.js';
export * from './fields.js';
export * from './fleet.js';
export * from './servers.js';
export * from './teams.js';
export * from './tickets.js';

import { z } from 'zod';
import { fleetEntryInput, fleetPolicyInput } from '../fleet.js';
import {
  changePasswordRequest,
  codeRequest,
  loginRequest,
  passwordRequest,
  proofRequest,
  registerRequest,
  twoFactorLoginRequest,
  webhookRequest,
} from './account.js';
import { startRolloutRequest } from './agent-updates.js';
import { alertChannelRequest, alertMuteRequest, alertRuleRequest } from './alerts.js';
import { addProductRequest } from './billing.js';
import { createKeyRequest, createTokenRequest } from './credentials.js';
import { createEnrolmentTokenRequest } from './enrolment.js';
import {
  addServerRequest,
  benchmarkRequest,
  serverConnectionRequest,
  testAddressRequest,
  testSavedServerRequest,
  updateServerRequest,
} from './servers.js';
import { invitationRequest, memberRoleRequest, teamNameRequest, teamSettingsRequest } from './teams.js';
import { openTicketRequest, ticketReplyRequest } from './tickets.js';

/** The request bodies by the name the OpenAPI document gives them (`<name>Request`, packages/protocol/src/openapi.ts). */
export const requestBodies = {
  Register: registerRequest,
  Login: loginRequest,
  TwoFactorLogin: twoFactorLoginRequest,
  ChangePassword: changePasswordRequest,
  Password: passwordRequest,
  Code: codeRequest,
  Proof: proofRequest,
  Webhook: webhookRequest,
  CreateToken: createTokenRequest,
  CreateKey: createKeyRequest,
  CreateEnrolmentToken: createEnrolmentTokenRequest,
  AddProduct: addProductRequest,
  AddServer: addServerRequest,
  TestServer: z.union([testSavedServerRequest, testAddressRequest]),
  UpdateServer: updateServerRequest,
  ServerConnection: serverConnectionRequest,
  Benchmark: benchmarkRequest,
  OpenTicket: openTicketRequest,
  TicketReply: ticketReplyRequest,
  AlertRule: alertRuleRequest,
  AlertChannel: alertChannelRequest,
  AlertMute: alertMuteRequest,
  FleetPolicy: fleetPolicyInput,
  FleetEntry: fleetEntryInput,
  StartRollout: startRolloutRequest,
  TeamName: teamNameRequest,
  TeamSettings: teamSettingsRequest,
  MemberRole: memberRoleRequest,
  Invitation: invitationRequest,
  AcceptInvitation: registerRequest,
} satisfies Record<string, z.ZodType>;
export type RequestBodyName = keyof typeof requestBodies;
