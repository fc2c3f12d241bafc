/** A missing list entry or pattern: answered 404. */
export class NotFound extends Error {}
/** A request that clashes with work in progress: answered 409. */
export class Conflict extends Error {}
