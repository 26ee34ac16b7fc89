// Markdown: parsed by remark (micromark, with GitHub's tables and autolinks), read for the inline
// code spans the other checks look at, and checked for local links by remark-validate-links.
import { resolve } from 'node:path';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import remarkValidateLinks from 'remark-validate-links';
import { unified } from 'unified';
import { engine } from 'unified-engine';
import { visit } from 'unist-util-visit';
import { ROOT } from './repo.mjs';

const HISTORICAL = '<!-- docs-check: historical -->';
const HISTORICAL_START = '<!-- docs-check: historical-start -->';
const HISTORICAL_END = '<!-- docs-check: historical-end -->';

/** Whether a link's URL is one of the repository's (`x.md`, `../y/`, `z.md#anchor`, `#anchor`). */
const isLocal = (url) => Boolean(url) && !/^[a-z][a-z0-9+.-]*:/i.test(url) && !url.startsWith('/');

/** The lines of a tree marked historical by HTML comments (see check-docs.mjs). */
function historicalLines(tree) {
  const lines = new Set();
  const ranges = [];
  let start;
  visit(tree, 'html', (node) => {
    node.value.split('\n').forEach((text, index) => {
      const line = node.position.start.line + index;
      if (text.includes(HISTORICAL_START)) start ??= line;
      if (text.includes(HISTORICAL)) lines.add(line);
      if (text.includes(HISTORICAL_END) && start !== undefined) {
        ranges.push([start, line]);
        start = undefined;
      }
    });
  });
  if (start !== undefined) ranges.push([start, Infinity]);
  return (line) => lines.has(line) || ranges.some(([from, to]) => from <= line && line <= to);
}

/**
 * A remark plugin storing in `file.data.docs` the inline code spans (`{ line, text, heading }`,
 * `heading` the code spans of the section's heading) and the local links (`{ line, column, url }`)
 * of a document, outside historical passages. Code blocks are not inline code: never read.
 */
function remarkCollect() {
  return (tree, file) => {
    const historical = historicalLines(tree);
    const spans = [];
    const links = [];
    let heading = [];
    visit(tree, (node) => {
      const { line, column } = node.position?.start ?? {};
      if (line === undefined || historical(line)) return;
      if (node.type === 'heading') {
        heading = [];
        visit(node, 'inlineCode', (code) => void heading.push(code.value));
      } else if (node.type === 'inlineCode') {
        const text = node.value
          .replace(/\s*\n\s*/g, ' ')
          .replace(/\\\|/g, '|')
          .trim();
        spans.push({ line, text, heading });
      } else if (['link', 'image', 'definition'].includes(node.type) && isLocal(node.url)) {
        links.push({ line, column, url: node.url });
      }
    });
    file.data.docs = { spans, links };
  };
}

/**
 * Parses `files` (absolute paths) and checks their local links: links to files and directories
 * that must exist, and `#anchors` that must be the GitHub slug (github-slugger) of a heading of
 * the target (`#L10` line anchors and `#readme` excepted). Resolves to one
 * `{ path, spans, links, problems }` per file, in order; `problems` are the broken links
 * (`{ line, url, why }`) and, for a file that could not be read, its error.
 */
export function readMarkdown(files) {
  const validateLinks = {
    repository: false, // offline: URLs (GitHub's included) are not checked, local links are
    root: ROOT,
    urlConfig: { headingPrefix: '#', lines: true, topAnchor: '#readme', prefix: '' },
  };
  return new Promise((done, fail) => {
    engine(
      {
        processor: unified().use(remarkParse).use(remarkGfm),
        plugins: [[remarkValidateLinks, validateLinks], remarkCollect],
        files,
        cwd: ROOT,
        extensions: ['md'],
        output: false,
        out: false,
        quiet: true,
        color: false,
        reporter: () => '',
      },
      (error, _code, context) => {
        if (error) return fail(error);
        const byPath = new Map(context.files.map((file) => [resolve(ROOT, file.path), file]));
        done(files.map((path) => result(path, byPath.get(path))));
      },
    );
  });
}

function result(path, file) {
  const { spans = [], links = [] } = file?.data.docs ?? {};
  const problems = [];
  for (const message of file?.messages ?? []) {
    if (!message.source?.startsWith('remark-validate-links')) {
      problems.push({ line: message.line ?? 1, why: message.reason });
      continue;
    }
    const start = message.place?.start ?? message.place;
    const link = links.find((l) => l.line === start?.line && l.column === start?.column);
    if (!link) continue; // a link in a historical passage
    const why = message.ruleId === 'missing-file' ? '' : ` (${message.reason.replaceAll('`', '')})`;
    problems.push({ line: link.line, url: link.url, why });
  }
  return { path, spans, links, problems };
}
