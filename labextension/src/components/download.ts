/**
 * Downloads through the browser: a hidden anchor clicked once.
 */
import { h } from './form';

/**
 * Let the browser download `href` and save it as `filename`; by default as
 * the server names it (its Content-Disposition).
 */
export function downloadUrl(href: string, filename = ''): void {
  const anchor = h('a', { href, download: filename });
  anchor.style.display = 'none';
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
}

/** Save `content` as a text file. */
export function downloadText(filename: string, content: string): void {
  const url = URL.createObjectURL(
    new Blob([content], { type: 'text/plain;charset=utf-8' })
  );
  downloadUrl(url, filename);
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}
