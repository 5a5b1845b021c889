// ESLint: type-aware rules from typescript-eslint over every TypeScript file,
// and one formatting convention (@stylistic) matching the code as written.
// `npm run lint` runs it with --max-warnings 0; .ci/run runs that.
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'clients/*/dist/', 'examples/*/dist/', 'data/', '.tmp/', 'coverage/', '**/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@stylistic': stylistic },
    rules: {
      // A leading underscore marks a name kept on purpose: a key destructured away, a positional parameter.
      '@typescript-eslint/no-unused-vars': ['warn', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@stylistic/quotes': ['warn', 'single', { avoidEscape: true }],
      '@stylistic/semi': ['warn', 'always'],
      '@stylistic/indent': ['warn', 2, { SwitchCase: 1 }],
      '@stylistic/comma-dangle': ['warn', 'always-multiline'],
      '@stylistic/eol-last': 'warn',
      '@stylistic/no-trailing-spaces': 'warn',
      '@stylistic/no-multiple-empty-lines': ['warn', { max: 2 }],
      '@stylistic/brace-style': ['warn', '1tbs', { allowSingleLine: true }],
      '@stylistic/object-curly-spacing': ['warn', 'always'],
      '@stylistic/arrow-parens': ['warn', 'always'],
      // 160: the code's long signatures and SQL builders read better unbroken; comments are held to it too.
      '@stylistic/max-len': ['warn', { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true, ignoreComments: false }],
    },
  },
  {
    // Tests read JSON answers (typed `any`, also in their helpers' signatures) and assert on them with expect:
    // the assertion is the type check there. Benchmarks read JSON answers too and check them at run time.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // The service reads rules only through the compiler: parsing rule text (acorn) is the compiler's job, and its
    // passes over the IR give the service what it needs (the cost profile: compiler/analysis/cost-pass.ts).
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'acorn', message: 'src/ does not parse rules: ask the compiler (compiler/index.ts) for what its passes over the IR know.' }],
        patterns: [{ group: ['acorn/*', 'acorn-*'], message: 'src/ does not parse rules: ask the compiler.' }],
      }],
    },
  },
  {
    // Inside the compiler acorn's tree is read once, by the checker that lowers it to IR: every analysis after it
    // (the cost model, the save-time warnings) is a pass over the IR, which carries the spans they quote.
    files: ['compiler/**/*.ts'],
    ignores: ['compiler/expression/parse.ts', 'compiler/expression/lower.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'acorn', message: 'only parse.ts and lower.ts read acorn: analyse the IR (compiler/expression/ir-walk.ts, source-span.ts).' }],
        patterns: [{ group: ['acorn/*', 'acorn-*'], message: 'only parse.ts and lower.ts read acorn: analyse the IR.' }],
      }],
    },
  },
  {
    // Migrations take Kysely<any>, as kysely advises: they must not depend on the schema as the code now types it.
    files: ['migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Compiler tests evaluate generated source with new Function, as the compiler itself does.
    files: ['test/compiler/**/*.ts'],
    rules: { '@typescript-eslint/no-implied-eval': 'off' },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
