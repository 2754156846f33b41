/**
 * What jsdom lacks that JupyterLab's packages use as they load: Lumino's
 * drag and drop extends `DragEvent` (as @jupyterlab/testing's shim does),
 * the web components' design tokens ask `matchMedia` for the colour
 * scheme (here: no media query matches), and a ReactWidget (a Dialog's
 * body and buttons) renders in `requestIdleCallback` (here: the next task).
 */
if (typeof globalThis.DragEvent === 'undefined') {
  globalThis.DragEvent = class DragEvent extends MouseEvent {};
}
if (typeof window.matchMedia !== 'function') {
  window.matchMedia = query => ({
    matches: false,
    media: query,
    onchange: null,
    addListener: () => undefined,
    removeListener: () => undefined,
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
    dispatchEvent: () => false
  });
}
if (typeof window.requestIdleCallback !== 'function') {
  window.requestIdleCallback = callback =>
    setTimeout(() => callback({ didTimeout: false, timeRemaining: () => 50 }));
  window.cancelIdleCallback = handle => clearTimeout(handle);
}
