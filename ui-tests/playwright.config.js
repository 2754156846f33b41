/**
 * Galata/Playwright configuration: Debian's Chromium, no video or trace
 * (ffmpeg is not needed), and a JupyterLab server started for the run.
 */
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

// Keep in step with jupyter_server_test_config.py.
const port = process.env.UI_TEST_PORT || '27888';
const baseURL = `http://127.0.0.1:${port}`;

module.exports = {
  ...baseConfig,
  // tests-mig/ is the MIG suite's, run by playwright-mig.config.js.
  testDir: './tests',
  reporter: [['list'], ['html', { open: 'never' }]],
  use: {
    ...baseConfig.use,
    baseURL,
    video: 'off',
    trace: 'off',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--headless',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run'
      ]
    }
  },
  webServer: {
    command: 'jlpm start',
    url: `${baseURL}/lab`,
    timeout: 120 * 1000,
    // Always a fresh server with this checkout's extension.
    reuseExistingServer: false
  }
};
