; Inno Setup 6 script for PhoneBuddy on Windows. installers/build.py windows runs:
;   iscc /DBundleDir=<dist>\PhoneBuddy /DAppVersion=<version> /O<dist> installers\windows\phonebuddy.iss
; The installer talks: every page is read aloud through Windows' own speech (SAPI), as well as being
; the standard Inno pages that NVDA and JAWS read (no custom-drawn controls). Escape stops the voice.
; The names and the version here must match installers/manifest.py (tests/test_installers_scripts.py).

#define AppName "PhoneBuddy"
#define AppId "org.phonebuddy.PhoneBuddy"
#define AppPublisher "PhoneBuddy Desktop contributors"
#define AppExe "PhoneBuddy.exe"
#define CliExe "phonebuddy.exe"
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#ifndef BundleDir
  #define BundleDir "..\..\dist\PhoneBuddy"
#endif

; The parts the bundle must carry (installers/manifest.py DATA_PARTS for Windows, plus the licence notices):
; refuse to compile an installer without them.
#sub CheckPart
  #if !FileExists(BundleDir + "\_internal\" + Part)
    #error "The bundle lacks " + Part + ": run python installers\build.py windows first"
  #endif
#endsub
#define Part "THIRD_PARTY_LICENSES.txt"
#call CheckPart
#define Part "adbutils\binaries\AdbWinApi.dll"
#call CheckPart
#define Part "adbutils\binaries\AdbWinUsbApi.dll"
#call CheckPart
#define Part "adbutils\binaries\adb.exe"
#call CheckPart
#define Part "fonts\wqy-microhei.ttc"
#call CheckPart
#define Part "piper\espeak-ng-data\phontab"
#call CheckPart
#define Part "scrcpy\scrcpy-server.jar"
#call CheckPart

[Setup]
AppId={#AppId}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher={#AppPublisher}
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
OutputBaseFilename={#AppName}-{#AppVersion}-setup
SetupIconFile=..\assets\phonebuddy.ico
UninstallDisplayIcon={app}\{#AppExe}
LicenseFile=..\COPYING
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
; Large, high-contrast friendly: no custom images, the system's colours and font size.
WizardSizePercent=120
DisableWelcomePage=no
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"; InfoAfterFile: "adb-usb-driver-en.txt"
Name: "chinesesimplified"; MessagesFile: "compiler:Languages\ChineseSimplified.isl"; InfoAfterFile: "adb-usb-driver-zh.txt"

[CustomMessages]
english.SayWelcome=Welcome to the PhoneBuddy installer. PhoneBuddy lets you use your Android phone by voice. This installer speaks each page. Press Enter for Next, Escape to stop the voice, Alt N for Next, Alt B for Back.
chinesesimplified.SayWelcome=欢迎安装手机助手。手机助手让您用语音使用安卓手机。安装程序会朗读每一页。按回车键进入下一步，按 Esc 键停止朗读。
english.SayLicense=The licence. PhoneBuddy is free software under the GNU General Public License version 3 or later. Press Alt A to accept, then Enter.
chinesesimplified.SayLicense=许可协议。手机助手是自由软件，采用 GNU 通用公共许可证第 3 版或更新版本。按 Alt A 接受，然后按回车。
english.SayDir=Where to install. The suggested folder is fine for most people. Press Enter to continue.
chinesesimplified.SayDir=安装位置。大多数人使用建议的文件夹即可。按回车继续。
english.SayTasks=Extra shortcuts. A desktop shortcut is on by default. Press Space to change it, Enter to continue.
chinesesimplified.SayTasks=附加快捷方式。默认会创建桌面快捷方式。按空格键更改，按回车继续。
english.SayReady=Ready to install. Press Enter to install PhoneBuddy.
chinesesimplified.SayReady=准备安装。按回车开始安装手机助手。
english.SayInstalling=Installing. Please wait; this takes about a minute.
chinesesimplified.SayInstalling=正在安装，请稍候，大约需要一分钟。
english.SayInfoAfter=About the phone's USB driver. The next text explains how to connect your phone with a USB cable. Use the arrow keys to read it, then press Enter.
chinesesimplified.SayInfoAfter=关于手机的 USB 驱动。下面的文字说明如何用 USB 线连接手机。用方向键阅读，然后按回车。
english.SayFinished=PhoneBuddy is installed. Press Enter to finish and start PhoneBuddy; it will help you set up your phone, and it talks too.
chinesesimplified.SayFinished=手机助手已安装。按回车完成并启动手机助手；它会帮助您设置手机，也会说话。
english.DesktopIcon=Create a desktop shortcut
chinesesimplified.DesktopIcon=创建桌面快捷方式
english.SelfCheck=Check the installation (PhoneBuddy self-check)
chinesesimplified.SelfCheck=检查安装（手机助手自检）

[Tasks]
Name: "desktopicon"; Description: "{cm:DesktopIcon}"

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{group}\{#AppName} self-check"; Filename: "{app}\{#CliExe}"; Parameters: "--self-check"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent
Filename: "{app}\{#CliExe}"; Parameters: "--self-check"; Description: "{cm:SelfCheck}"; Flags: postinstall skipifsilent unchecked waituntilterminated

[Code]
var
  Voice: Variant;
  VoiceReady: Boolean;

{ Speak through SAPI (asynchronous, cutting off the previous page). Silent if speech is unavailable. }
procedure Speak(const Text: String);
begin
  try
    if not VoiceReady then
    begin
      Voice := CreateOleObject('SAPI.SpVoice');
      VoiceReady := True;
    end;
    Voice.Speak(Text, 3); { SVSFlagsAsync or SVSFPurgeBeforeSpeak }
  except
    VoiceReady := False;
  end;
end;

procedure StopSpeaking();
begin
  if VoiceReady then
    try
      Voice.Speak('', 2);
    except
    end;
end;

procedure CurPageChanged(CurPageID: Integer);
begin
  case CurPageID of
    wpWelcome: Speak(CustomMessage('SayWelcome'));
    wpLicense: Speak(CustomMessage('SayLicense'));
    wpSelectDir: Speak(CustomMessage('SayDir'));
    wpSelectTasks: Speak(CustomMessage('SayTasks'));
    wpReady: Speak(CustomMessage('SayReady'));
    wpInstalling: Speak(CustomMessage('SayInstalling'));
    wpInfoAfter: Speak(CustomMessage('SayInfoAfter'));
    wpFinished: Speak(CustomMessage('SayFinished'));
  end;
end;

procedure CancelButtonClick(CurPageID: Integer; var Cancel, Confirm: Boolean);
begin
  StopSpeaking();
end;

procedure DeinitializeSetup();
begin
  StopSpeaking();
end;
