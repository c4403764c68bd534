import { HONEYPOT_FIELD } from '../../commands/webform/webform.ts'
import type { WebFormRow } from '../../projections/webform/webforms.ts'
import { escapeHtml } from '../kernel/html.ts'
import { publicPaths } from './schemas.ts'

/**
 * What a site embeds: a script that draws the form where it is included and posts it, and a page
 * holding only that script, for an iframe. The script builds the form with DOM calls and sets every
 * text with textContent, so a label can never become markup; the form's data is JSON in a script
 * file, never inside HTML. It posts `application/x-www-form-urlencoded` (a CORS "simple" request:
 * no preflight), with a fresh idempotency key per rendered form, so a double click is one submission.
 */
const SCRIPT = String.raw`(function () {
  var spec = __SPEC__;
  var script = document.currentScript;
  var base = script && script.src ? script.src : location.href;
  var submitUrl = new URL(spec.submit_path, base).toString();
  var key = (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Date.now()) + Math.random().toString(16).slice(2);
  var form = document.createElement('form');
  form.className = 'crm-webform';
  form.noValidate = true;
  var title = document.createElement('h2');
  title.textContent = spec.name;
  form.appendChild(title);
  var errors = {};
  function row(field) {
    var wrap = document.createElement('p');
    var label = document.createElement('label');
    var id = 'crm-wf-' + spec.id + '-' + field.key;
    label.htmlFor = id;
    label.textContent = field.label + (field.required ? ' *' : '');
    var input;
    if (field.type === 'textarea') input = document.createElement('textarea');
    else if (field.type === 'select') {
      input = document.createElement('select');
      var blank = document.createElement('option');
      blank.value = '';
      input.appendChild(blank);
      field.options.forEach(function (choice) { var o = document.createElement('option'); o.value = choice; o.textContent = choice; input.appendChild(o); });
    } else {
      input = document.createElement('input');
      input.type = { email: 'email', phone: 'tel', checkbox: 'checkbox' }[field.type] || 'text';
    }
    input.id = id;
    input.name = field.key;
    input.required = field.required;
    var error = document.createElement('span');
    error.className = 'crm-webform-error';
    errors[field.key] = error;
    if (field.type === 'checkbox') { wrap.appendChild(input); wrap.appendChild(label); } else { wrap.appendChild(label); wrap.appendChild(input); }
    wrap.appendChild(error);
    return wrap;
  }
  spec.fields.forEach(function (field) { form.appendChild(row(field)); });
  if (spec.consent) form.appendChild(row({ key: 'consent', label: spec.consent, type: 'checkbox', required: true }));
  var trap = document.createElement('p');
  trap.style.display = 'none';
  trap.setAttribute('aria-hidden', 'true');
  var bait = document.createElement('input');
  bait.name = spec.honeypot;
  bait.tabIndex = -1;
  bait.autocomplete = 'off';
  trap.appendChild(bait);
  form.appendChild(trap);
  var status = document.createElement('p');
  status.className = 'crm-webform-status';
  status.setAttribute('role', 'status');
  var button = document.createElement('button');
  button.type = 'submit';
  button.textContent = 'Send';
  form.appendChild(button);
  form.appendChild(status);
  function page() {
    var from = window.top !== window && document.referrer ? document.referrer : location.href;
    try { var url = new URL(from); return url.origin + url.pathname; } catch (e) { return ''; }
  }
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    Object.keys(errors).forEach(function (k) { errors[k].textContent = ''; });
    var body = new URLSearchParams();
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name) return;
      if (el.type === 'checkbox') body.append(el.name, el.checked ? 'on' : 'off');
      else body.append(el.name, el.value);
    });
    body.append('idempotency_key', key);
    body.append('page_url', page());
    button.disabled = true;
    status.textContent = '';
    fetch(submitUrl, { method: 'POST', body: body }).then(function (res) {
      return res.json().then(function (answer) { return { ok: res.ok, answer: answer }; });
    }).then(function (result) {
      button.disabled = false;
      if (result.ok) { form.replaceChildren(status); status.textContent = result.answer.message; return; }
      var problems = result.answer.errors;
      if (typeof problems === 'string') { status.textContent = problems; return; }
      Object.keys(problems).forEach(function (k) { var text = [].concat(problems[k]).join(' '); if (errors[k]) errors[k].textContent = text; else status.textContent = text; });
    }).catch(function () { button.disabled = false; status.textContent = 'The form could not be sent. Please try again.'; });
  });
  var target = document.getElementById('crm-webform-' + spec.id);
  if (target) target.appendChild(form);
  else if (script && script.parentNode) script.parentNode.insertBefore(form, script.nextSibling);
  else document.body.appendChild(form);
})();
`

/** The script of a published form; its data is JSON (with `<` escaped, so no text in it can close a script element). */
export function embedScript(form: WebFormRow): string {
  const spec = {
    id: form.id,
    name: form.name,
    fields: form.fields.map(({ key, label, type, required, options }) => ({ key, label, type, required, options })),
    consent: form.consent?.text ?? null,
    honeypot: HONEYPOT_FIELD,
    submit_path: publicPaths(form).submit_path,
  }
  return SCRIPT.replace('__SPEC__', () => JSON.stringify(spec).replace(/</g, '\\u003c'))
}

/** The page an iframe shows: the form's name and its script, nothing else. */
export function embedPage(form: WebFormRow): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(form.name)}</title></head>
<body><div id="crm-webform-${form.id}"></div><script src="${publicPaths(form).script_path}"></script></body></html>
`
}

/** The embed page's policy: only its own script, and framing only by the allowed sites (any, when none are listed). */
export function embedPagePolicy(form: WebFormRow): string {
  const ancestors = form.allowed_origins.length ? form.allowed_origins.join(' ') : '*'
  return ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "style-src 'self'", "base-uri 'none'", "form-action 'self'", `frame-ancestors ${ancestors}`].join('; ')
}
