/**
 * Unit tests of the pure frontend modules (formatting, sweep values, the
 * submit dialog's field rules, the plan's lines), as the JupyterLab
 * extension template runs them: jest with ts-jest, no browser (`*.spec.ts`,
 * node). Components are rendered with React Testing Library in jsdom
 * (`*.spec.tsx`, the second project), as jupyterlab-git tests its own. The
 * UI's flows are tested by Galata in ../ui-tests.
 *
 * In jsdom the components import JupyterLab and Lumino as they are
 * published: ES modules, which jest (CommonJS) cannot load, so
 * `transformIgnorePatterns` lets those packages through and ts-jest
 * transpiles their `.js` (file by file, no type check, `allowJs`), as
 * @jupyterlab/testing's jest config does with babel. Their `.css` and `.svg`
 * imports (icons are SVG strings) become `test/asset-stub.js`, and
 * `test/jsdom-shim.js` adds the browser APIs jsdom lacks (DragEvent,
 * matchMedia).
 */
const transform = {
  '^.+\\.tsx?$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }]
};
const moduleFileExtensions = ['ts', 'tsx', 'js', 'json'];

/** Published as ES modules, so transpiled for the jsdom tests. */
const esm = ['@jupyterlab', '@jupyter', '@lumino', '@microsoft', 'exenv-es6'];

module.exports = {
  projects: [
    {
      displayName: 'pure',
      testEnvironment: 'node',
      roots: ['<rootDir>/test'],
      testRegex: '\\.spec\\.ts$',
      transform,
      moduleFileExtensions
    },
    {
      displayName: 'components',
      testEnvironment: 'jsdom',
      roots: ['<rootDir>/test'],
      testRegex: '\\.spec\\.tsx$',
      transform: {
        ...transform,
        '^.+\\.js$': [
          'ts-jest',
          {
            tsconfig: {
              allowJs: true,
              isolatedModules: true,
              module: 'commonjs',
              esModuleInterop: true
            }
          }
        ]
      },
      transformIgnorePatterns: [`/node_modules/(?!(${esm.join('|')})/)`],
      setupFiles: ['<rootDir>/test/jsdom-shim.js'],
      moduleNameMapper: {
        '\\.(css|svg)$': '<rootDir>/test/asset-stub.js'
      },
      moduleFileExtensions
    }
  ]
};
