import type { CookieOptions, Response } from 'express';
import { API_PREFIX } from '../app.setup.js';
import type { AppConfig } from '../common/config/app-config.js';

export const REFRESH_COOKIE = 'refresh_token';

/**
 * Refresh cookie attributes. The path limits the cookie to the auth routes, so it
 * is never sent with ordinary API calls; `Secure` is dropped only in development (plain http).
 */
function attributes(config: AppConfig): CookieOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    path: `/${API_PREFIX}/auth`,
    secure: config.nodeEnv !== 'development',
  };
}

export function setRefreshCookie(res: Response, token: string, config: AppConfig): void {
  res.cookie(REFRESH_COOKIE, token, { ...attributes(config), maxAge: config.refreshTokenExpireDays * 86_400_000 });
}

/** Browsers only drop a cookie when name, path (and domain) match, so clearing repeats them. */
export function clearRefreshCookie(res: Response, config: AppConfig): void {
  res.clearCookie(REFRESH_COOKIE, attributes(config));
}
