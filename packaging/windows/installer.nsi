; The Windows installer: per user, no administrator rights. It installs
; both programs in %LOCALAPPDATA%\Programs\MCP Sandbox, adds Start-menu
; shortcuts and an uninstaller (Settings > Apps lists it), and offers to
; start the tray, which sets up Claude Desktop and Cursor on its first
; start. Settings in %APPDATA%\mcp-sandbox are never touched.
;
; Built by packaging/build.sh windows with makensis; it defines VERSION,
; FILE_VERSION (a.b.c.d), COMMIT, SRC (the directory with the two .exe and
; the .ico) and OUTFILE.

Unicode true
ManifestDPIAware true
RequestExecutionLevel user
SetCompressor /SOLID lzma

!include "MUI2.nsh"
!include "LogicLib.nsh"

!define APP "MCP Sandbox"
!define TRAY "mcp-sandbox-tray.exe"
!define WINDOW "mcp-sandbox-window.exe"
!define SERVER "mcp-sandbox.exe"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${APP}"
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"

Name "${APP}"
Caption "${APP} ${VERSION} Setup"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\${APP}"
InstallDirRegKey HKCU "${UNINSTALL_KEY}" "InstallLocation"
BrandingText "${APP} ${VERSION} (${COMMIT})"

VIProductVersion "${FILE_VERSION}"
VIFileVersion "${FILE_VERSION}"
VIAddVersionKey /LANG=1033 "ProductName" "${APP}"
VIAddVersionKey /LANG=1033 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "FileDescription" "${APP} ${VERSION} Setup"
VIAddVersionKey /LANG=1033 "CompanyName" "MCP Sandbox"
VIAddVersionKey /LANG=1033 "LegalCopyright" "The MCP Sandbox authors"

!define MUI_ICON "${SRC}\mcp-sandbox.ico"
!define MUI_UNICON "${SRC}\mcp-sandbox.ico"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\${TRAY}"
!define MUI_FINISHPAGE_RUN_TEXT "Start ${APP} (it sets up Claude Desktop and Cursor)"

!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; StopTray ends a running tray so its file can be replaced or removed:
; first politely, then for good.
!macro StopTray
  nsExec::Exec 'taskkill /F /IM ${WINDOW}'
  Pop $0
  nsExec::Exec 'taskkill /IM ${TRAY}'
  Pop $0
  ${If} $0 == 0
    Sleep 1500
    nsExec::Exec 'taskkill /F /IM ${TRAY}'
    Pop $0
  ${EndIf}
!macroend

Section "Install"
  SetShellVarContext current
  !insertmacro StopTray
  SetOutPath "$INSTDIR"
  ; An AI client may be running the server right now. Windows lets a
  ; running program's file be renamed, not replaced: move it aside.
  Delete "$INSTDIR\${SERVER}.old"
  ${If} ${FileExists} "$INSTDIR\${SERVER}"
    Rename "$INSTDIR\${SERVER}" "$INSTDIR\${SERVER}.old"
  ${EndIf}
  File "${SRC}\${TRAY}"
  File "${SRC}\${WINDOW}"
  File "${SRC}\${SERVER}"
  Delete /REBOOTOK "$INSTDIR\${SERVER}.old"
  WriteUninstaller "$INSTDIR\Uninstall.exe"

  CreateDirectory "$SMPROGRAMS\${APP}"
  CreateShortcut "$SMPROGRAMS\${APP}\${APP}.lnk" "$INSTDIR\${TRAY}" "" "$INSTDIR\${TRAY}" 0
  CreateShortcut "$SMPROGRAMS\${APP}\Uninstall ${APP}.lnk" "$INSTDIR\Uninstall.exe"

  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${APP}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\${TRAY},0"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "MCP Sandbox"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "URLInfoAbout" "https://github.com/mcp-sandbox/mcp-sandbox"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
  SectionGetSize 0 $0
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "EstimatedSize" $0
SectionEnd

Section "Uninstall"
  SetShellVarContext current
  !insertmacro StopTray
  Delete "$INSTDIR\${TRAY}"
  Delete "$INSTDIR\${WINDOW}"
  Delete /REBOOTOK "$INSTDIR\${SERVER}"
  Delete "$INSTDIR\${SERVER}.old"
  Delete "$INSTDIR\Uninstall.exe"
  RMDir "$INSTDIR"
  Delete "$SMPROGRAMS\${APP}\${APP}.lnk"
  Delete "$SMPROGRAMS\${APP}\Uninstall ${APP}.lnk"
  RMDir "$SMPROGRAMS\${APP}"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  ; The tray's "start at login" entry would point at a removed file.
  DeleteRegValue HKCU "${RUN_KEY}" "${APP}"
SectionEnd
