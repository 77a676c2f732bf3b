// E2B's quickstart, as written for E2B's cloud: it runs on Box unchanged with E2B_API_URL,
// E2B_SANDBOX_URL and E2B_API_KEY set (docs/E2B.md). Needs `npm install e2b` beside it.
import { Sandbox } from 'e2b'

const sbx = await Sandbox.create()

// Run a command and stream its output as it is written.
const result = await sbx.commands.run('for i in 1 2 3; do echo "line $i"; sleep 0.2; done', {
  onStdout: (data) => process.stdout.write('stdout: ' + data),
})
console.log('exit code:', result.exitCode)

// Upload a file, list the directory, and download the file back.
await sbx.files.write('/home/user/hello.txt', 'Hello from E2B!')
const files = await sbx.files.list('/home/user')
console.log('files:', files.map((f) => f.name).join(', '))
console.log('downloaded:', await sbx.files.read('/home/user/hello.txt'))

await sbx.kill()
