//! promptfoo `javascript` and `python` assertions as gavel `script` checks: node
//! or python3 runs a small adapter that gives the code promptfoo's `output` and
//! `context` and turns its result into a verdict by promptfoo's rules.
//!
//! Those rules (promptfoo 0.120, `src/assertions/javascript.ts`, `python.ts`):
//! inline code is rendered with the test's vars first; one line is an expression
//! (a trailing `;` dropped; leading `const`/`let`/`var` statements kept, the last
//! statement returned), several lines a function body. A boolean is the verdict;
//! a number passes above 0, or at or above the assertion's `threshold` when one
//! is given; a `{pass, score, reason}` object is the verdict as it stands (in
//! Python a score under the threshold fails it). The score gavel records is
//! clamped to 0..1. Code that throws, or returns
//! anything else, fails the assertion (promptfoo's verdict, not an `error`).
//! An assertion's `transform` and the test's `options.transform` (JavaScript)
//! rewrite `output` first, in javascript assertions (a python assertion sees
//! the raw answer: its transform is noted as unmapped).

use gavel_core::ScriptSpec;

use crate::files::{file_ref, resolve};
use crate::node::Node;
use crate::render::render;

/// What a script assertion is read against.
pub(crate) struct ScriptCtx<'a> {
    pub(crate) vars: &'a serde_json::Value,
    pub(crate) base: &'a std::path::Path,
    /// The test's `options.transform` (JavaScript), applied before the
    /// assertion's own.
    pub(crate) transform: Option<&'a str>,
}

/// Whether `spec` is a javascript assertion's check (it applies transforms).
pub(crate) fn is_javascript(spec: &ScriptSpec) -> bool {
    spec.command.first().is_some_and(|c| c == "node")
}

/// A `javascript` or `python` assertion as a `script` check, or why not.
pub(crate) fn script(
    kind: &str,
    node: &Node,
    ctx: &ScriptCtx<'_>,
    threshold: Option<f64>,
) -> Result<ScriptSpec, String> {
    let Some(source) = node.get("value").and_then(Node::as_str) else {
        return Err("needs the code as text or a file:// path".into());
    };
    let (how, code) = match file_ref(source) {
        Some(reference) => {
            let paths = resolve(reference, ctx.base, node).map_err(|e| e.to_string())?;
            let path = paths.first().ok_or("no file")?;
            ("file", path.display().to_string())
        }
        // promptfoo renders inline code with the vars; code that is not a
        // template stays as written.
        None => (
            "inline",
            render(source, ctx.vars).unwrap_or_else(|_| source.to_owned()),
        ),
    };
    let threshold_arg = threshold.map(|t| t.to_string()).unwrap_or_default();
    let own = node.get("transform").and_then(Node::as_str);
    let mut command = match kind {
        "javascript" => vec!["node".into(), "-e".into(), JS_ADAPTER.into()],
        _ => vec!["python3".into(), "-c".into(), PY_ADAPTER.into()],
    };
    command.extend([how.to_owned(), code, threshold_arg]);
    if kind == "javascript" {
        command.extend(ctx.transform.into_iter().chain(own).map(str::to_owned));
    }
    Ok(ScriptSpec {
        command,
        shell: None,
        input: Default::default(),
        timeout_s: None,
        threshold,
    })
}

/// Runs a promptfoo `javascript` assertion. argv: `inline CODE` or `file PATH`
/// (a module whose export, or its default, is called with `(output,
/// context)`), the threshold (empty: none), then output transforms in order.
/// stdin is gavel's script input (`output`, `context`, `input`); stdout the
/// verdict `{pass, score, reason}`.
const JS_ADAPTER: &str = r#"
const d = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const [how, src, th, ...transforms] = process.argv.slice(1);
const threshold = th === '' ? undefined : Number(th);
const context = { vars: d.context || {}, prompt: d.input };
// A statement-level `;` outside quotes: its index, or -1.
function lastSemicolon(code) {
  let quote = null, at = -1;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === ';') at = i;
  }
  return at;
}
function body(code) {
  code = code.trimEnd();
  if (code.includes('\n')) return code;
  const line = code.trim().replace(/;+\s*$/, '');
  if (!/^(const|let|var)\s/.test(line)) return 'return ' + line;
  const at = lastSemicolon(line);
  const last = at < 0 ? '' : line.slice(at + 1).trim();
  return last ? line.slice(0, at + 1) + ' return ' + last : line;
}
function verdict(r) {
  if (typeof r === 'boolean') return { pass: r, score: r ? 1 : 0 };
  if (typeof r === 'number') {
    return { pass: threshold === undefined ? r > 0 : r >= threshold, score: r };
  }
  if (r && typeof r === 'object' && typeof r.pass === 'boolean') return r;
  return { pass: false, score: 0,
    reason: 'must return a boolean, number or {pass, score, reason}; got ' + JSON.stringify(r) };
}
(async () => {
  let output = d.output;
  for (const t of transforms) {
    output = await new Function('output', 'context', t.includes('\n') ? t : 'return ' + t)(output, context);
    if (output === undefined || output === null) throw new Error('the transform returned nothing: ' + t);
  }
  let r;
  if (how === 'file') {
    let m = require(require('path').resolve(src));
    if (typeof m !== 'function') m = m.default || m;
    r = await m(output, context);
  } else {
    r = await new Function('output', 'context', body(src))(output, context);
  }
  const v = verdict(r);
  // gavel scores are 0..1; the verdict is already decided.
  if (typeof v.score === 'number') v.score = Number.isFinite(v.score) ? Math.min(1, Math.max(0, v.score)) : 0;
  console.log(JSON.stringify(v));
})().catch((e) => {
  console.log(JSON.stringify({ pass: false, score: 0, reason: 'the assertion threw: ' + String(e) }));
});
"#;

/// Runs a promptfoo `python` assertion. argv: `inline CODE` (an expression, or a
/// function body when it has several lines) or `file PATH` (a file defining
/// `get_assert(output, context)`), then the threshold (empty: none).
const PY_ADAPTER: &str = r#"
import json, runpy, sys
d = json.load(sys.stdin)
how, src, th = sys.argv[1], sys.argv[2], sys.argv[3]
threshold = float(th) if th else None
output = d['output']
context = {'vars': d.get('context') or {}, 'prompt': d.get('input')}
def run():
    if how == 'file':
        return runpy.run_path(src)['get_assert'](output, context)
    lines = src.split('\n')
    if len(lines) == 1:
        return eval(src, {'output': output, 'context': context, 'json': json})
    indent = next((l[:len(l) - len(l.lstrip())] for l in lines if l.strip() and l[0].isspace()), '    ')
    ns = {'json': json}
    exec('def main(output, context):\n' + '\n'.join(indent + l for l in lines), ns)
    return ns['main'](output, context)
def verdict(r):
    if isinstance(r, str) and r.lower() in ('true', 'false'):
        r = r.lower() == 'true'
    if isinstance(r, bool):
        return {'pass': r, 'score': 1 if r else 0}
    if isinstance(r, str) and r.startswith('{'):
        r = json.loads(r)
    if isinstance(r, dict):
        if not isinstance(r.get('pass'), bool):
            return {'pass': False, 'score': 0, 'reason': 'a result object needs a boolean pass'}
        if threshold is not None and r.get('score', 0) < threshold:
            r['pass'] = False
        return r
    score = float(r)
    return {'pass': score > 0 if threshold is None else score >= threshold, 'score': score}
try:
    out = verdict(run())
except Exception as e:
    out = {'pass': False, 'score': 0, 'reason': 'the assertion failed to run: %s' % e}
# gavel scores are 0..1; the verdict is already decided.
if isinstance(out.get('score'), (int, float)) and not isinstance(out.get('score'), bool):
    out['score'] = min(1.0, max(0.0, float(out['score']))) if out['score'] == out['score'] else 0.0
print(json.dumps(out))
"#;
