// The token functions come from their own module of @palisade/protocol: its main entry also loads
// zod (about 12 MB resident), which the agent never uses.
export { generateToken, hashToken, isWellFormedToken, safeEqual, tokenLast4 } from '@palisade/protocol/tokens';
