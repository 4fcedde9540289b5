#!/usr/bin/python3
"""drift.py: the documentation says what the binary does.

    tests/docs/drift.py KDUMPINIT MKINITRAMFS MAN8 MKMAN8 CLIMD CONFIG_C README

Checks, each printed as an "ok NAME" or "FAIL NAME: why" line:
  commands   the top-level --help's commands are the man page's COMMANDS
             sections and docs/CLI.md's sections, both ways
  options.C  every option `kdumpinit C --help` names is in C's section of
             the man page and of CLI.md, and every option those name is in
             the --help (both ways)
  global     --help and --version are in the man page
  params     the PID-1 parameters of config/config.c's table are in the man
             page and in README.md's table, both ways
  mkinitramfs  its -h options are the man page's, both ways
  synopsis.C every option C takes (each --help option the binary does not
             call unknown) is in C's usage lines of its --help, of the man
             page's SYNOPSIS and of CLI.md's, and every command is in
             README.md's "Commands"
Exit 0 when all pass. Nothing here reads the strings it compares from the
documents alone: one side is always the binary or the code.
"""
import re
import subprocess
import sys

OPT = re.compile(r'(?<![\w-])--[a-z][a-z0-9-]*')


def run(*argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    return p.stdout.decode()


def roff_text(s):
    """The man page with roff's escapes undone, enough to read words."""
    s = s.replace('\\-', '-').replace('\\e', '\\')
    return re.sub(r'\\f[BIRP]', '', s)


def man_sections(text, macro):
    """{name: body} for each '.SS name' (macro 'SS') or '.SH name'."""
    out, name, body = {}, None, []
    for line in text.splitlines():
        m = re.match(r'\.(SH|SS)\s+"?([^"]*)"?\s*$', line)
        if m:
            if name is not None:
                out[name] = '\n'.join(body)
            name = m.group(2).strip() if m.group(1) == macro else None
            if m.group(1) != macro:
                name = None
            body = []
        elif name is not None:
            body.append(line)
    if name is not None:
        out[name] = '\n'.join(body)
    return out


def md_sections(text):
    out, name, body = {}, None, []
    for line in text.splitlines():
        m = re.match(r'##\s+(\S+)\s*$', line)
        if m:
            if name is not None:
                out[name] = '\n'.join(body)
            name, body = m.group(1), []
        elif line.startswith('#'):
            if name is not None:
                out[name] = '\n'.join(body)
            name, body = None, []
        elif name is not None:
            body.append(line)
    if name is not None:
        out[name] = '\n'.join(body)
    return out


results = []


def check(name, problems):
    if problems:
        results.append(False)
        print('FAIL %s: %s' % (name, '; '.join(problems)))
    else:
        results.append(True)
        print('ok %s' % name)


def both_ways(have, doc, what_have, what_doc):
    p = []
    if have - doc:
        p.append('%s, not in %s: %s' % (what_have, what_doc, ' '.join(sorted(have - doc))))
    if doc - have:
        p.append('%s, not in %s: %s' % (what_doc, what_have, ' '.join(sorted(doc - have))))
    return p


def accepted(kdi, c, opts):
    """The options the binary takes: given with a value and followed by an
    unknown option, every command refuses the line before doing anything;
    one it does not take is the one it calls unknown."""
    out = set()
    for o in opts:
        said = run(kdi, c, o + '=\x01', '--zz-no-such-option')
        if ("unknown option '%s'" % o) not in said:
            out.add(o)
    return out


def man_synopsis(man):
    """{command: the options its SYNOPSIS entries name}."""
    out = {}
    for entry in re.split(r'^\.br\s*$', man_sections(man, 'SH').get('SYNOPSIS', ''), flags=re.M):
        words = re.findall(r'^\.[BIR]+\s+(.*)$', entry, re.M)
        if len(words) >= 2 and words[0].strip() == 'kdumpinit':
            c = words[1].split()[0].strip('[]')
            out.setdefault(c, set()).update(OPT.findall(entry))
    return out


def md_synopsis(cli):
    out = {}
    for m in re.finditer(r'^    kdumpinit ([a-z]+)(.*)$', cli.split('\n## ')[0], re.M):
        out.setdefault(m.group(1), set()).update(OPT.findall(m.group(2)))
    return out


def help_usage(text):
    """The usage lines at the top of a --help: up to the first blank line."""
    return text.split('\n\n')[0]


def main():
    kdi, mkinit, man8, mkman8, climd, config_c, readme = sys.argv[1:8]
    man = roff_text(open(man8).read())
    cli = open(climd).read()
    top = run(kdi, '--help')
    cmds = set(re.findall(r'^  ([a-z]+)  ', top, re.M))
    if not cmds:
        check('commands', ['no command found in `%s --help`' % kdi])
        return
    man_cmds = man_sections(man, 'SS')
    man_cmds.pop('Other options', None)
    cli_cmds = md_sections(cli)
    check('commands', both_ways(cmds, set(man_cmds), '--help commands', 'the man page')
          + [p for p in both_ways(cmds, set(cli_cmds) & (cmds | set(man_cmds)),
                                  '--help commands', 'CLI.md') if 'not in CLI.md' in p])
    for c in sorted(cmds):
        helpopts = set(OPT.findall(run(kdi, c, '--help'))) - {'--help'}
        manopts = set(OPT.findall(man_cmds.get(c, '')))
        cliopts = set(OPT.findall(cli_cmds.get(c, '')))
        check('options.' + c, both_ways(helpopts, manopts, '--help', 'the man page')
              + both_ways(helpopts, cliopts, '--help', 'CLI.md'))
    msyn, csyn = man_synopsis(man), md_synopsis(cli)
    readme_text = open(readme).read()
    rcmds = re.search(r'^## Commands\n(.*?)^## ', readme_text, re.M | re.S)
    rcmds = set(re.findall(r'[a-z]+', rcmds.group(1).split('`')[1])) if rcmds else set()
    for c in sorted(cmds):
        text = run(kdi, c, '--help')
        takes = accepted(kdi, c, set(OPT.findall(text)) - {'--help'})
        p = []
        for where, have in (('its --help usage', set(OPT.findall(help_usage(text)))),
                            ('the man SYNOPSIS', msyn.get(c)), ('CLI.md\'s synopsis', csyn.get(c))):
            if have is None:
                p.append('%s not in %s' % (c, where))
            elif takes - have:
                p.append('%s lacks %s' % (where, ' '.join(sorted(takes - have))))
        if c not in rcmds:
            p.append("%s not in README.md's Commands" % c)
        check('synopsis.' + c, p)
    other = man_sections(man, 'SS').get('Other options', '')
    check('global', [('%s not in the man page' % o) for o in ('--help', '--version')
                     if o not in other or o not in top])
    keys = set(re.findall(r'\{\s*"([a-z_]+)",\s*set_', open(config_c).read()))
    pid1 = man_sections(man, 'SH').get('PID 1 MODE', '')
    man_keys = set(re.findall(r'kdumpinit\.([a-z_]+)=', pid1))
    readme_keys = set(re.findall(r'^\| `kdumpinit\.([a-z_]+)=', open(readme).read(), re.M))
    if not keys:
        check('params', ['no parameter table found in ' + config_c])
    else:
        check('params', both_ways(keys, man_keys, config_c, 'the man page')
              + both_ways(keys, readme_keys, config_c, 'README.md'))
    mkhelp = run(mkinit, '-h')
    mkopts = set(re.findall(r'^  (-[a-zA-Z]) ', mkhelp, re.M))
    mkman = roff_text(open(mkman8).read())
    mkman_opts = set(re.findall(r'^\.B[IR]?\s+"?(-[a-zA-Z])\b', man_sections(mkman, 'SH').get('OPTIONS', ''), re.M))
    if not mkopts:
        check('mkinitramfs', ['no option found in `%s -h`' % mkinit])
    else:
        check('mkinitramfs', both_ways(mkopts, mkman_opts, 'mkinitramfs -h', 'its man page'))


main()
sys.exit(0 if results and all(results) else 1)
