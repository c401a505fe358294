// The `signgate` .NET tool: runs the self-contained signgate executable shipped beside this launcher for the
// machine it runs on, with the same arguments, standard streams, exit code and signals.
using System.Diagnostics;
using System.Runtime.InteropServices;

var arch = RuntimeInformation.OSArchitecture;
string? rid = arch == Architecture.X64 && OperatingSystem.IsWindows() ? "win-x64" : arch == Architecture.X64 && OperatingSystem.IsLinux() ? "linux-x64" : null;
if (rid is null)
{
    Console.Error.WriteLine($"error SG_ERR_USAGE: the signgate tool carries executables for win-x64 and linux-x64; this machine is {RuntimeInformation.OSDescription} {arch}");
    Console.Error.WriteLine("  hint: install Node.js and run signgate from npm instead: npm install -g signgate");
    return 2;
}
var exe = Path.Combine(AppContext.BaseDirectory, "runtimes", rid, rid == "win-x64" ? "signgate-win-x64.exe" : "signgate-linux-x64");
if (!File.Exists(exe))
{
    Console.Error.WriteLine($"error SG_ERR_IO_READ: {exe} is missing from the tool's folder");
    Console.Error.WriteLine("  hint: reinstall the tool: dotnet tool update Signgate.Tool (with -g, --tool-path or in the manifest, as it was installed)");
    return 3;
}
// NuGet does not keep the executable bit of the files it extracts.
if (!OperatingSystem.IsWindows() && (File.GetUnixFileMode(exe) & UnixFileMode.UserExecute) == 0)
{
    try
    {
        File.SetUnixFileMode(exe, File.GetUnixFileMode(exe) | UnixFileMode.UserExecute | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute);
    }
    catch (Exception e) when (e is UnauthorizedAccessException or IOException)
    {
        Console.Error.WriteLine($"error SG_ERR_IO_READ: {exe} is not executable and cannot be made so ({e.Message})");
        Console.Error.WriteLine($"  hint: run once as the user who installed the tool: chmod +x \"{exe}\"");
        return 3;
    }
}
if (!OperatingSystem.IsWindows())
{
    // Linux: the launcher becomes signgate (execv keeps the process id, the standard streams and the environment),
    // so SIGTERM from systemd, a container runtime or CI, SIGINT and SIGHUP reach signgate itself, and its exit code
    // is the process's: there is no second process to orphan or to forward signals to.
    var argv = new string?[args.Length + 2];
    argv[0] = exe;
    args.CopyTo(argv, 1);
    Native.execv(exe, argv);
    Console.Error.WriteLine($"error SG_ERR_IO_READ: {exe} could not be started (errno {Marshal.GetLastPInvokeError()})");
    Console.Error.WriteLine("  hint: reinstall the tool: dotnet tool update Signgate.Tool (with -g, --tool-path or in the manifest, as it was installed)");
    return 3;
}
// Windows: signgate runs as a child on the same console, so Ctrl+C, Ctrl+Break and a console close reach it
// directly; the launcher ignores them, waits for signgate to finish and passes its exit code on.
var start = new ProcessStartInfo(exe) { UseShellExecute = false };
foreach (var arg in args) start.ArgumentList.Add(arg);
Console.CancelKeyPress += (_, e) => e.Cancel = true;
using var child = Process.Start(start)!;
child.WaitForExit();
return child.ExitCode;

static class Native
{
    /// <summary>Replaces this process with <paramref name="path"/>; returns only when that fails.</summary>
    [DllImport("libc", SetLastError = true)]
    public static extern int execv(string path, string?[] argv);
}
