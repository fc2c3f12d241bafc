/** The one error type routes and services throw; the central handler turns it into `{"error": message}`. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, string> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new AppError(400, message);
export const notFound = (what: string) => new AppError(404, `${what} not found`);
export const unauthorized = (message = 'authentication required') => new AppError(401, message);
export const forbidden = (message: string) => new AppError(403, message);
/** 403 for an account that lacks a permission; `code` lets the dashboard tell it from other refusals. */
/** Every refusal for want of a permission: 403, code `permission_required`, naming it (docs/teams.md). */
export const permissionRequired = (permission: string, message = `this needs the ${permission} permission`) =>
  new AppError(403, message, { code: 'permission_required', permission });
export const conflict = (message: string) => new AppError(409, message);

/** Whether a database error is a unique-index violation, in either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint/.test(e.message ?? '');
}
