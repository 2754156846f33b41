/**
 * Issue 38, item 2: the Lab's own terminal finds `jupyter gpu-env`. Terminals run a login shell whose
 * profile sets PATH anew; the server's terminal setting (written by scripts/lab.sh) puts this
 * installation's venv first again. Typed into a real terminal, its output read back from a file the
 * shell wrote in the server's root.
 */
import { expect, test } from '@jupyterlab/galata';

test('a terminal in the Lab runs jupyter gpu-env from this installation', async ({
  page,
  tmpPath
}) => {
  // In the test's folder, by the root the server gives its terminals.
  const out = `${tmpPath}/terminal-check.txt`;
  const read = async (): Promise<string> => {
    const reply = await page.request.get(
      `/api/contents/${out}?content=1&type=file&format=text`
    );
    return reply.ok() ? ((await reply.json()).content as string) : '';
  };
  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('terminal:create-new');
  });
  const terminal = page.locator('.jp-Terminal');
  await expect(terminal).toBeVisible();
  await terminal.click();
  await page.keyboard.type(
    `{ command -v jupyter; jupyter gpu-env --help; echo finished; } > "$JUPYTER_SERVER_ROOT/${out}" 2>&1\n`
  );
  try {
    await expect.poll(read, { timeout: 60_000 }).toContain('finished');
    const text = await read();
    expect(text).toContain('usage: jupyter gpu-env');
    expect(text).not.toContain('command not found');
  } finally {
    await page.request.delete(`/api/contents/${out}`);
  }
});
