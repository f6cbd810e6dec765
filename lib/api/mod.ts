// The API's own records: tenants by key, Idempotency-Key records, conversation pointers; runtime-neutral.
export {
  mayAddressSession,
  parseTenantKeys,
  tenantOfKey,
  tenantOfSessionKey,
  tenantPrefix,
  tenantSessionKey,
} from "./api_tenants.ts";
export type { ApiTenant, TenantKey } from "./api_tenants.ts";
export { ConversationPointer } from "./conversation_pointer.ts";
export { claimRequestKey } from "./request_keys.ts";
export type { KeyStorage } from "./request_keys.ts";
