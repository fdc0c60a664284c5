// The dashboard's one page (runtime/dashboard/page.html, built into the
// binary: these machines reach no network, so no CDN and no download). Its
// script polls the /api endpoints every 1.5 s and draws the tables and the
// curves itself (inline SVG).
#pragma once

namespace crucible::dashboard {

const char* page_html();

}  // namespace crucible::dashboard
