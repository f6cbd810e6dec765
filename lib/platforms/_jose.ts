// The parts of jose baton uses, in one module imported on first use (lib/platforms/_jwt.ts, google_chat_token.ts), so the bundle keeps only these; runtime-neutral (Web Crypto).
export { createLocalJWKSet, errors, importPKCS8, jwtVerify, SignJWT } from "jose";
