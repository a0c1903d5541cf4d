/*
 * lib/export/flamegraph/flame_script.c — the viewer every flame graph
 * carries (docs/design/outputs.md, "Flame graph SVG"), so the SVG needs
 * nothing else to be read: click a frame to zoom into it (its ancestors stretch across,
 * shown faded; frames beside it hide), "Reset Zoom" or a click on the
 * root to undo, "Search" (or Ctrl-F) highlights frames whose name
 * matches a regular expression and shows the share they cover (nested
 * matches counted once): of the zoomed frame when zoomed, as
 * flamegraph.pl does (a matching ancestor covers all of it), with the
 * share of the whole graph beside it; a frame's tooltip is its
 * <title>, also shown in the line at the bottom while the pointer is on
 * it.  The script works from the drawn geometry alone (each frame is
 * <g><title>NAME\nfigures</title><rect/><text/></g> under #frames), so
 * the C side and the script share no other format.  It is also the API
 * the browser test drives: window.flamegraph.{zoom, unzoom, search}.
 * It never contains the sequence that would end its CDATA section.
 */
#include "lib/export/flamegraph/flamegraph.h"

const char exp_flame_css[] =
    "text{font-family:Verdana,Helvetica,sans-serif;font-size:12px;fill:#000}\n"
    "#title{font-size:17px;text-anchor:middle}\n"
    "#subtitle{fill:#555;text-anchor:middle}\n"
    "#search,#unzoom{cursor:pointer}\n"
    "#search{text-anchor:end}\n"
    "#matched{text-anchor:end}\n"
    "#frames g{cursor:pointer}\n"
    "#frames g:hover rect{stroke:#000;stroke-width:0.5}\n"
    "#frames text{pointer-events:none}\n"
    ".hide{display:none}\n"
    ".parent{opacity:0.5}\n";

const char exp_flame_js[] =
    "(function(){\n"
    "var cur=document.currentScript;\n"
    "var R=(cur&&cur.ownerSVGElement)||document.querySelector('svg');\n"
    "var W=+R.getAttribute('width'),XP=+R.getAttribute('data-xpad');\n"
    "var FS=+R.getAttribute('data-fontsize'),CW=0.59*FS;\n"
    "var ICICLE=R.getAttribute('data-icicle')==='1';\n"
    "var frames=R.querySelector('#frames'),details=R.querySelector('#details');\n"
    "var unz=R.querySelector('#unzoom'),sbtn=R.querySelector('#search');\n"
    "var matched=R.querySelector('#matched');\n"
    "var gs=Array.prototype.slice.call(frames.children),EPS=0.02;\n"
    "var zoomed=null,term=null;\n"
    "gs.forEach(function(g){var r=g.children[1];g._x=+r.getAttribute('x');\n"
    " g._w=+r.getAttribute('width');g._y=+r.getAttribute('y');\n"
    " g._info=g.children[0].textContent.split('\\n');g._name=g._info[0];\n"
    " g._fill=r.getAttribute('fill');});\n"
    "function fit(g,x,w){var t=g.children[2],n=Math.floor((w-3)/CW);\n"
    " var c=Array.from(g._name);t.setAttribute('x',(x+3).toFixed(2));\n"
    " t.textContent=n<3?'':(c.length<=n?g._name:c.slice(0,n-2).join('')+'..');}\n"
    "function place(g,x,w){var r=g.children[1];r.setAttribute('x',x.toFixed(2));\n"
    " r.setAttribute('width',w.toFixed(2));fit(g,x,w);}\n"
    "function unzoom(){zoomed=null;unz.classList.add('hide');\n"
    " gs.forEach(function(g){g.classList.remove('hide','parent');place(g,g._x,g._w);});\n"
    " if(term!==null)search(term);}\n"
    "function zoom(z){if(typeof z==='string'){z=gs.filter(function(g){return g._name===z;})[0];\n"
    "  if(!z)return false;}\n"
    " if(z===gs[0]){unzoom();return true;}\n"
    " var x0=z._x,w0=z._w,y0=z._y,k=(W-2*XP)/w0;zoomed=z;unz.classList.remove('hide');\n"
    " gs.forEach(function(g){var up=ICICLE?g._y<y0:g._y>y0;\n"
    "  if(up){if(g._x<=x0+EPS&&g._x+g._w>=x0+w0-EPS){g.classList.remove('hide');\n"
    "    g.classList.add('parent');place(g,XP,W-2*XP);}else g.classList.add('hide');}\n"
    "  else if(g===z||(g._y!==y0&&g._x>=x0-EPS&&g._x<x0+w0-EPS)){\n"
    "   g.classList.remove('hide','parent');place(g,XP+(g._x-x0)*k,g._w*k);}\n"
    "  else g.classList.add('hide');});\n"
    " if(term!==null)search(term);return true;}\n"
    "function reset_search(){term=null;sbtn.textContent='Search';matched.textContent=' ';\n"
    " matched.removeAttribute('data-share');matched.removeAttribute('data-share-all');\n"
    " gs.forEach(function(g){g.children[1].setAttribute('fill',g._fill);g.classList.remove('match');});}\n"
    "function cover(hits){hits=hits.slice().sort(function(a,b){return a._x-b._x||b._w-a._w;});\n"
    " var sum=0,end=-1;hits.forEach(function(g){if(g._x>=end-EPS){sum+=g._w;end=g._x+g._w;}\n"
    "  else if(g._x+g._w>end){sum+=g._x+g._w-end;end=g._x+g._w;}});return sum;}\n"
    "function pct(part,whole){var s=whole>0?100*part/whole:0;return s>100?100:s;}\n"
    "function search(t){var re;try{re=new RegExp(t);}catch(e){return -1;}\n"
    " reset_search();term=t;var hits=[];\n"
    " gs.forEach(function(g){if(g!==gs[0]&&re.test(g._name)){g.classList.add('match');\n"
    "  g.children[1].setAttribute('fill','rgb(230,0,230)');hits.push(g);}});\n"
    " var all=pct(cover(hits),gs.length?gs[0]._w:0),share=all;\n"
    " if(zoomed)share=hits.some(function(g){return g.classList.contains('parent');})?100:\n"
    "  pct(cover(hits.filter(function(g){return !g.classList.contains('hide')&&\n"
    "   !g.classList.contains('parent');})),zoomed._w);\n"
    " sbtn.textContent='Reset Search';matched.setAttribute('data-share',share.toFixed(2));\n"
    " matched.setAttribute('data-share-all',all.toFixed(2));\n"
    " matched.textContent='Matched: '+share.toFixed(2)+'%'+\n"
    "  (zoomed?' (of all: '+all.toFixed(2)+'%)':'');return share;}\n"
    "function ask(){if(term!==null){reset_search();return;}\n"
    " var t=window.prompt('Search for (regular expression):','');if(t)search(t);}\n"
    "frames.addEventListener('click',function(e){var g=e.target.closest('g');\n"
    " if(g&&g.parentNode===frames)zoom(g);});\n"
    "frames.addEventListener('mouseover',function(e){var g=e.target.closest('g');\n"
    " if(g&&g.parentNode===frames)details.textContent=g._info.join('; ');});\n"
    "frames.addEventListener('mouseout',function(){details.textContent=' ';});\n"
    "unz.addEventListener('click',unzoom);sbtn.addEventListener('click',ask);\n"
    "window.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)&&e.key==='f'){\n"
    " e.preventDefault();ask();}});\n"
    "window.flamegraph={zoom:zoom,unzoom:unzoom,search:search,reset_search:reset_search,\n"
    " zoomed:function(){return zoomed?zoomed._name:null;}};\n"
    "})();\n";
