/**
 * The one request helper of every API client: a call under
 * `{baseUrl}gpu-env/api/` through JupyterLab's ServerConnection (base URL,
 * token and XSRF handled by JupyterLab), its JSON answer parsed, and any
 * failure turned into an {@link ApiError}.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type { IApiErrorBody } from './types';

/** The API's root, relative to the server's base URL. */
export const API_NAMESPACE = 'gpu-env/api';

/**
 * An error answered by the API (or a network failure, with status 0).
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string,
    readonly details: Record<string, unknown>[] | null = null
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Any rejection as an ApiError (what the sections display). */
export function asApiError(error: unknown): ApiError {
  return error instanceof ApiError
    ? error
    : new ApiError(String(error), 0, 'client_error');
}

/** The message of any rejection. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Ask `ask(id)` for every id at once; resolves to the answers that came, in
 * order. `gone` is told each id the server no longer knows (404); other
 * failures are passed over, to be asked again next time.
 */
export async function askEach<T>(
  ids: string[],
  ask: (id: string) => Promise<T>,
  gone: (id: string) => void
): Promise<T[]> {
  const answers = await Promise.allSettled(ids.map(ask));
  const came: T[] = [];
  answers.forEach((result, i) => {
    if (result.status === 'fulfilled') {
      came.push(result.value);
    } else if (
      result.reason instanceof ApiError &&
      result.reason.status === 404
    ) {
      gone(ids[i]);
    }
  });
  return came;
}

/** A path segment, escaped. */
export function enc(part: string): string {
  return encodeURIComponent(part);
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface IRequestOptions {
  /** Sent as JSON. */
  body?: object;
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Aborts the request (a newer one replaced it). */
  signal?: AbortSignal;
}

/** Where `path` (under the API root) is, with its query. */
export function apiUrl(
  settings: ServerConnection.ISettings,
  path: string,
  query: IRequestOptions['query'] = {}
): string {
  const url = URLExt.join(settings.baseUrl, API_NAMESPACE, path);
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) {
      search.set(key, String(value));
    }
  }
  const suffix = search.toString();
  return suffix ? `${url}?${suffix}` : url;
}

function isErrorBody(value: unknown): value is IApiErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as IApiErrorBody).message === 'string'
  );
}

/**
 * Call `path` under the API root and parse its JSON answer.
 *
 * Rejects with an {@link ApiError} whatever went wrong: network failure
 * (status 0, reason `network`), an error status (the body's message, reason
 * and details), or an answer that is not JSON.
 */
export async function requestApi<T>(
  settings: ServerConnection.ISettings,
  method: Method,
  path: string,
  options: IRequestOptions = {}
): Promise<T> {
  const url = apiUrl(settings, path, options.query);
  const init: RequestInit = { method, signal: options.signal };
  if (options.body !== undefined) {
    init.body = JSON.stringify(options.body);
    init.headers = { 'Content-Type': 'application/json' };
  }
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new ApiError(
      `Cannot reach the server: ${messageOf(error)}`,
      0,
      'network'
    );
  }

  const text = await response.text();
  let body: unknown = null;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      if (response.ok) {
        throw new ApiError(
          `The server answered ${url} with something that is not JSON.`,
          response.status,
          'invalid_response'
        );
      }
    }
  }

  if (!response.ok) {
    if (isErrorBody(body)) {
      throw new ApiError(
        body.message,
        response.status,
        body.reason ?? 'error',
        (body.details as Record<string, unknown>[] | null | undefined) ?? null
      );
    }
    const fallback = response.statusText || `HTTP ${response.status}`;
    throw new ApiError(fallback, response.status, 'http_error');
  }
  return body as T;
}

/** A client of part of the API: the server settings and the helper. */
export abstract class ApiClient {
  constructor(
    readonly serverSettings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {}

  protected request<T>(
    method: Method,
    path: string,
    options?: IRequestOptions
  ): Promise<T> {
    return requestApi<T>(this.serverSettings, method, path, options);
  }
}
