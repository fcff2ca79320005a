"""Runs a command under a real pseudo-terminal (its controlling terminal) and types answers to passphrase prompts.

argv[1]: JSON list, the command; argv[2]: JSON list of answers, each typed (with Enter) when the next
passphrase prompt appears. Prints JSON {"code": exit code, "output": everything written to the terminal}.
"""
import json
import os
import pty
import select
import sys

command = json.loads(sys.argv[1])
answers = json.loads(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(command[0], command)
output = b''
answered = 0
while True:
    ready, _, _ = select.select([fd], [], [], 60)
    if not ready:
        break
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    output += data
    asked = output.count(b'Passphrase for') + output.count(b'passphrase again:')
    while answered < asked and answered < len(answers):
        os.write(fd, answers[answered].encode('utf-8') + b'\r')
        answered += 1
_, status = os.waitpid(pid, 0)
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
print(json.dumps({"code": code, "output": output.decode('utf-8', 'replace'), "answered": answered}))
