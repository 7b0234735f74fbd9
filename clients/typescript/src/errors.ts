/**
 * What the client throws: one class per kind of refusal, all of them MemoryConsoleError.
 * The server answers every error as `{"detail": ...}`; `.detail` is that, `.status` the
 * HTTP status (null for `ConnectionFailed`, when there was no answer).
 */

export class MemoryConsoleError extends Error {
  readonly status: number | null;
  readonly detail: unknown;

  constructor(status: number | null, detail: unknown, options?: { cause?: unknown }) {
    super(status === null ? String(detail) : `${status}: ${String(detail)}`, options);
    this.name = new.target.name;
    this.status = status;
    this.detail = detail;
  }
}

/** 401: no key, or a key that is unknown, revoked, paused or expired. */
export class Unauthorized extends MemoryConsoleError {}
/** 403: visible but not the key's to change (a memory held at a wider scope). */
export class Forbidden extends MemoryConsoleError {}
/** 404: unknown, or outside the key's reach (the two look the same on purpose). */
export class NotFound extends MemoryConsoleError {}
/** 410: the actor was erased; nothing is written for it. */
export class Gone extends MemoryConsoleError {}
/** 422: the request broke a rule; the detail names it (and the limit). */
export class ValidationError extends MemoryConsoleError {}
/** 429: too many requests. */
export class RateLimited extends MemoryConsoleError {}
/** 5xx: the server failed, or could not reach its database (503). */
export class ServerError extends MemoryConsoleError {}
/** No answer: the connection failed or timed out (`status` is null). */
export class ConnectionFailed extends MemoryConsoleError {}

const BY_STATUS: Record<number, typeof MemoryConsoleError> = {
  401: Unauthorized,
  403: Forbidden,
  404: NotFound,
  410: Gone,
  422: ValidationError,
  429: RateLimited,
};

/** The error for an answer with this status. */
export function errorFor(status: number, detail: unknown): MemoryConsoleError {
  const Class = status >= 500 ? ServerError : (BY_STATUS[status] ?? MemoryConsoleError);
  return new Class(status, detail);
}
